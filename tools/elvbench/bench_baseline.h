/*
 * Reference baselines for elvbench, written here and not in the library: a FIFO list and the
 * classic one-way elevator that inserts into a sorted linked list (BSD disksort): requests at
 * or above the head position in ascending order, then those below it, ascending.
 */
#ifndef ELVBENCH_BASELINE_H
#define ELVBENCH_BASELINE_H

#include <stdint.h>
#include <string.h>

struct bnode {
	struct bnode *next;
	uint64_t sector;
};

struct baseline {
	int sorted;
	unsigned nr;
	struct bnode *head, *tail;
	uint64_t pos; /* head position: start of the last dispatched request */
};

static inline int baseline_init(struct baseline *b, const char *name)
{
	memset(b, 0, sizeof(*b));
	if (!strcmp(name, "baseline-fifo"))
		return 0;
	if (!strcmp(name, "baseline-sorted-list")) {
		b->sorted = 1;
		return 0;
	}
	return -1;
}

/* Order of n in the current sweep: first those at or past pos, then the wrapped ones. */
static inline int baseline_before(const struct baseline *b, uint64_t x, uint64_t y)
{
	int xw = x < b->pos, yw = y < b->pos;

	return xw != yw ? !xw : x < y;
}

static __attribute__((noinline, unused)) void baseline_add(struct baseline *b, struct bnode *n)
{
	struct bnode **p = &b->head;

	n->next = NULL;
	b->nr++;
	if (!b->sorted) {
		if (b->tail)
			b->tail->next = n;
		else
			b->head = n;
		b->tail = n;
		return;
	}
	while (*p && !baseline_before(b, n->sector, (*p)->sector))
		p = &(*p)->next;
	n->next = *p;
	*p = n;
}

static __attribute__((noinline, unused)) struct bnode *baseline_dispatch(struct baseline *b)
{
	struct bnode *n = b->head;

	if (!n)
		return NULL;
	b->head = n->next;
	if (!b->head)
		b->tail = NULL;
	b->nr--;
	b->pos = n->sector;
	return n;
}

#endif
