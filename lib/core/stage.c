/*
 * Admission stages: optional steps between elv_add() and the policy that may hold requests
 * back, like the barrier list does, but for their own reasons (a zone whose write pointer a
 * write must wait for, a stream over its rate).
 *
 *   elv_add() -> [slot ELV_STAGE_ZONE] -> [slot ELV_STAGE_QOS] -> barrier list -> policy
 *
 * The zone stage comes first. It judges a write against every write of the zone it let go,
 * wherever that write is now, so a write a later stage holds counts as issued for its zone;
 * and it lets a zone's next write go only once the previous one was dispatched (or
 * completed), so a later stage never holds two writes of one zone and cannot reorder them
 * (mClock reorders requests of different clients). In the other order the zone stage would
 * judge writes without seeing those the QoS stage still held, and refuse or fail in-order
 * writes queued behind them.
 *
 * How to write one
 *   Fill a struct elv_stage_ops (elv_internal.h) and attach it with elv_stage_attach(q, slot,
 *   ops, data) from the stage's public attach call; @data is the stage's state in memory the
 *   host gave it (no malloc). Attaching needs an idle queue (nothing queued, held or in
 *   flight), so every request a stage is told about went through it; detaching needs the
 *   stage to hold nothing. Attaching sets the queue's gate to a staged value: elv_add(),
 *   elv_dispatch() and elv_complete() test the gate anyway (callbacks, torn-down queues),
 *   so they find the staged paths through that test, and a queue without stages runs the
 *   same instructions as before stages existed. While no stage holds a request or has a
 *   dispatched or completed hook, dispatch and complete keep their plain paths
 *   (ELV_GATE_STAGED_ADD, elv_internal.h). The core reaches this file only through
 *   q->stage_vt, set by elv_stage_attach(): a firmware that attaches no stage links none of
 *   it. With a single stage, speed builds of queue.c call its hooks themselves: admit from
 *   elv_add() when it has no validate hook (q->stage_one), release from the pump and
 *   next_event from elv_next_event() (q->stage_sole), with no loop over the slots; what they
 *   do is what the loops here do.
 *
 * The hooks, and when the core calls them
 *   validate(q, rq)       elv_add(), every attached stage, before any admit(): a stage that
 *                         may refuse a request says so here, so that no stage has changed
 *                         anything when elv_add() returns the error. Optional.
 *   admit(q, rq, now)     elv_add() (slot order), and when an earlier stage releases @rq:
 *                         ELV_STAGE_PASS hands it on, ELV_STAGE_HELD means the stage took it
 *                         (linked through rq's fifo member, which is the stage's while it
 *                         holds it), a negative ELV_E* refuses it having changed nothing. A
 *                         refusal at release time has no caller to return to: the request
 *                         goes back to the host through the queue's stage_fail callback
 *                         (elv_stage_set_fail()). A request from elv_add() is ELV_RQ_IDLE
 *                         here, one an earlier stage releases is still ELV_RQ_HELD: a stage
 *                         that may refuse should refuse only the former (the earlier stage
 *                         has ordered the latter already). When a later stage refuses, the
 *                         earlier stages that passed the request on hear completed(...,
 *                         ELV_STAGE_WITHDRAWN), which undoes what passing it changed.
 *                         Admit works at @now and must not read q->now: with one stage
 *                         and no validate hook, elv_add() moves the queue's clock to @now
 *                         only once admit has taken the request (queue.c).
 *   release(q, now)       elv_dispatch() before it asks the policy, and after every
 *                         completion, in a loop until NULL: one held request that may go on
 *                         (not called while the stage holds nothing, nor while
 *                         elv_past_stages() is at least the stage's full_out, a bound
 *                         the stage keeps when only room past it can let a request go).
 *   next_event(q)         elv_next_event(): when a held request becomes releasable by time
 *                         alone (queue time, ELV_TIME_NEVER for none); the earliest of the
 *                         policy's and every stage's is reported.
 *   dispatched(q, rq, t)  a request went to the device. Optional.
 *   completed(q, rq, s, t) a request the stages passed on came back from the device (s = 0
 *                         done, s < 0 the host's error from elv_complete_status()), or left
 *                         the queue unserved from the policy, the requeue list or a later
 *                         stage, or was refused by a later stage (cancel, drain, refusal:
 *                         s = ELV_STAGE_WITHDRAWN). Every attached stage with the
 *                         hook is told; each ignores requests that are not its business.
 *                         Optional.
 *   take_all(q, list)     elv_drain(): every held request onto @list, oldest first.
 *   cancel(q, rq)         elv_cancel() of a held request: 0 when this stage held it.
 *   allow_merge(q, a, b)  veto a merge of @b onto the end of @a. Optional.
 *   check(q)              elv_queue_check(): the number of requests held, or ELV_EINVAL.
 *
 * What the core guarantees
 *   A held request has state ELV_RQ_HELD and its owner set, like one behind a barrier. It
 *   counts in elv_stats().queued and in its stream's requests (a stream with held requests
 *   cannot exit), but not in the policy's count: policies never see it. It comes back from
 *   elv_drain() (after the requeued, the policy's and the barrier-held ones, in slot order),
 *   can be elv_cancel()led, and stays where it is across elv_switch(): a stage is not policy
 *   state. It takes no part in merge-on-add while held (a stage may merge it itself, through
 *   elv_merge_back_into(), when it releases it). Ordering by ELV_RQ_BARRIER starts when a
 *   request leaves the stages: a request a stage holds has not yet reached the barrier list.
 *   Hooks run with the queue's gate open; only elv_stage_fail() calls into the host.
 */
#include "elv_internal.h"

static const struct elv_stage_vt elv_stage_vt;

_Static_assert(sizeof(((struct elv_queue *)0)->stage) / sizeof(struct elv_stage) == ELV_STAGE_NR,
	       "one stage slot per ELV_STAGE_* value");

/* Is the queue idle enough to gain or lose a stage: nothing anywhere but in flight? */
static int elv_stage_quiet(const struct elv_queue *q)
{
	return !(q->nr_queued | q->nr_held | q->nr_requeued | q->nr_staged);
}

/* q->stage_sole: 1 + the slot of the only attached stage, 0 with none or several. */
static uint8_t elv_stage_sole(const struct elv_queue *q)
{
	unsigned slot;

	for (slot = 0; slot < ELV_STAGE_NR; slot++)
		if (q->stages == 1u << slot)
			return (uint8_t)(slot + 1u);
	return 0;
}

/* q->stage_one: elv_add() admits through a single stage without validate hook by itself. */
static uint8_t elv_stage_one(const struct elv_queue *q)
{
	unsigned sole = elv_stage_sole(q);

	return sole && !q->stage[sole - 1u].ops->validate ? (uint8_t)sole : 0u;
}

int elv_stage_attach(struct elv_queue *q, unsigned slot, const struct elv_stage_ops *ops,
		     void *data)
{
	int err = elv_stage_gate_err(q); /* ELV_ENOSYS when stages are compiled out */

	if (err)
		return err;
	if (slot >= ELV_STAGE_NR || !ops || !ops->admit || !ops->release ||
	    !ops->take_all || !ops->cancel || !ops->check || !ops->next_event)
		return ELV_EINVAL;
	/* A request in flight was not seen by the stage: its completion would confuse it. */
	if (q->stage[slot].ops || !elv_stage_quiet(q) || q->nr_in_flight)
		return ELV_EBUSY;
	q->stage[slot].ops = ops;
	q->stage[slot].data = data;
	q->stage[slot].nr_held = 0;
	q->stage[slot].full_out = 0;
	q->stages |= (uint8_t)(1u << slot);
	/* The core tells the stages of dispatches and completions only if one listens. */
	if (ops->dispatched || ops->completed)
		q->stage_hear |= (uint8_t)(1u << slot);
	q->stage_vt = &elv_stage_vt;
	q->gate = elv_stage_gate(q); /* the entry points now take their staged paths */
	q->stage_one = elv_stage_one(q);
	q->stage_sole = elv_stage_sole(q);
	elv_merge_veto_update(q);
	return 0;
}

int elv_stage_detach(struct elv_queue *q, unsigned slot)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (slot >= ELV_STAGE_NR || !q->stage[slot].ops)
		return ELV_EINVAL;
	if (q->stage[slot].nr_held)
		return ELV_EBUSY;
	q->stage[slot].ops = NULL;
	q->stage[slot].data = NULL;
	q->stage[slot].full_out = 0;
	q->stages &= (uint8_t)~(1u << slot);
	q->stage_hear &= (uint8_t)~(1u << slot);
	q->gate = q->stages ? elv_stage_gate(q) : ELV_GATE_OPEN;
	q->stage_one = elv_stage_one(q);
	q->stage_sole = elv_stage_sole(q);
	elv_merge_veto_update(q);
	return 0;
}

void elv_stage_set_fail(struct elv_queue *q, void (*fn)(void *, struct elv_request *, int),
			void *ctx)
{
	q->stage_fail = fn;
	q->stage_fail_ctx = ctx;
}

/* The host gets @rq back unserved with @err: counted and traced as a cancel (arg -err). */
void elv_stage_fail(struct elv_queue *q, unsigned slot, struct elv_request *rq, int err,
		    int held)
{
	if (held) {
		q->stage[slot].nr_held--;
		q->nr_staged--;
	}
	ELV_STAT_ADD(q, cancelled, 1);
	elv_trace(q, ELV_TRACE_CANCEL, rq, NULL, (uint64_t)(-(int64_t)err), q->now);
	elv_rq_release(q, rq);
	if (q->stage_fail)
		ELV_CALLBACK(q, q->stage_fail(q->stage_fail_ctx, rq, err));
}

/*
 * The stage of @slot joins @rq, which it held and has unlinked, onto the end of the queued
 * @c: 1 when merged (@rq is the host's again), 0 when the rules refused (still held).
 */
int elv_stage_merge(struct elv_queue *q, unsigned slot, struct elv_request *c,
		    struct elv_request *rq)
{
	if (q->cfg.no_merges || c->state != ELV_RQ_QUEUED || !elv_merge_back_into(q, c, rq))
		return 0;
	q->stage[slot].nr_held--;
	q->nr_staged--;
	return 1;
}

static int elv_stages_validate(const struct elv_queue *q, const struct elv_request *rq)
{
	unsigned i;
	int err;

	for (i = 0; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (ops && ops->validate && (err = ops->validate(q, rq)) < 0)
			return err;
	}
	return 0;
}

/* The stages in the slots before @upto hear how @rq, which they passed on, came back. */
static void elv_stages_completed_upto(struct elv_queue *q, struct elv_request *rq, int status,
				      uint64_t now, unsigned upto)
{
	unsigned i;

	for (i = 0; i < upto; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (ops && ops->completed)
			ops->completed(q, rq, status, now);
	}
}

/* @rq, which the stages before slot @upto passed on, leaves them unserved: they must know. */
static void elv_stages_withdrawn(struct elv_queue *q, struct elv_request *rq, unsigned upto)
{
	elv_stages_completed_upto(q, rq, ELV_STAGE_WITHDRAWN, q->now, upto);
}

/*
 * Offer @rq to the stages from slot @first on: ELV_STAGE_PASS (through all of them),
 * ELV_STAGE_HELD, or the refusal of the stage that refused it (nothing changed there; the
 * stages before it, which had passed it on, were told it is withdrawn).
 */
static int elv_stages_admit(struct elv_queue *q, struct elv_request *rq, uint64_t now,
			    unsigned first)
{
	unsigned i;
	int r;

	for (i = first; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (!ops)
			continue;
		r = ops->admit(q, rq, now);
		if (r == ELV_STAGE_HELD) {
			elv_stage_took(q, i, rq);
			return r;
		}
		if (r < 0) {
			elv_stages_withdrawn(q, rq, i); /* every slot before @i passed it on */
			return r;
		}
	}
	return ELV_STAGE_PASS;
}

/* The first slot whose stage may release a request, ELV_STAGE_NR for none. */
static unsigned elv_stages_releasing(const struct elv_queue *q)
{
	unsigned i;

	for (i = 0; i < ELV_STAGE_NR && !elv_stage_may_release(q, &q->stage[i]); i++)
		;
	return i;
}

/* Let every releasable request go on, from the stage of slot @first on (the stages before it
 * may release none, and what the later ones release cannot change that): through the later
 * stages, then to the barrier list or the policy. A later stage that refuses one hands it
 * back through stage_fail. */
static ELV_APART void elv_stages_release(struct elv_queue *q, unsigned first, uint64_t now)
{
	unsigned i;
	struct elv_request *rq;
	int r;

	for (i = first; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (!ops)
			continue;
		while (elv_stage_may_release(q, &q->stage[i]) &&
		       (rq = ops->release(q, now)) != NULL) {
			q->stage[i].nr_held--;
			q->nr_staged--;
			r = elv_stages_admit(q, rq, now, i + 1);
			if (r == ELV_STAGE_PASS)
				elv_stage_enqueue(q, rq, now);
			else if (r < 0)
				elv_stage_fail(q, i + 1, rq, r, 0);
		}
	}
}

/* elv_stages_release() when a stage may release a request. Most pumps find none (every
 * dispatch, while the QoS stage waits for room): the test alone takes no register saves. */
static void elv_stages_pump(struct elv_queue *q, uint64_t now)
{
	unsigned i = elv_stages_releasing(q);

	if (i < ELV_STAGE_NR)
		elv_stages_release(q, i, now);
}

static void elv_stages_dispatched(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	unsigned i;

	for (i = 0; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (ops && ops->dispatched)
			ops->dispatched(q, rq, now);
	}
}

static void elv_stages_completed(struct elv_queue *q, struct elv_request *rq, int status,
				 uint64_t now)
{
	elv_stages_completed_upto(q, rq, status, now, ELV_STAGE_NR);
}

/* elv_cancel() of a held request: 0 when a stage held it (now unlinked and uncounted). */
static int elv_stages_cancel(struct elv_queue *q, struct elv_request *rq)
{
	unsigned i;

	for (i = 0; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (ops && q->stage[i].nr_held && ops->cancel(q, rq) == 0) {
			q->stage[i].nr_held--;
			q->nr_staged--;
			elv_stages_withdrawn(q, rq, i); /* the earlier stages passed it on */
			return 0;
		}
	}
	return ELV_ENOENT;
}

/* elv_drain(): every held request onto @list, slot by slot; the stages before the one
 * that held a request hear that it is withdrawn. */
static void elv_stages_take_all(struct elv_queue *q, struct elv_list *list)
{
	struct elv_list mine;
	struct elv_request *rq;
	unsigned i;

	for (i = 0; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (!ops || !q->stage[i].nr_held)
			continue;
		elv_list_init(&mine);
		ops->take_all(q, &mine);
		q->stage[i].nr_held = 0;
		while ((rq = elv_list_first_rq(&mine)) != NULL) {
			elv_list_del(&rq->fifo);
			elv_stages_withdrawn(q, rq, i);
			elv_list_add_tail(list, &rq->fifo);
		}
	}
	q->nr_staged = 0;
}

/* The earlier of @t (queue time or ELV_TIME_NEVER) and every stage's next event. (Speed
 * builds of queue.c ask a lone stage themselves.) */
static uint64_t elv_stages_next_event(const struct elv_queue *q, uint64_t t)
{
	unsigned i;

	for (i = 0; i < ELV_STAGE_NR; i++)
		if (q->stage[i].ops)
			t = elv_stage_next_event(q, &q->stage[i], t);
	return t;
}

static int elv_stages_allow_merge(const struct elv_queue *q, const struct elv_request *a,
				  const struct elv_request *b)
{
	unsigned i;

	for (i = 0; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (ops && ops->allow_merge && !ops->allow_merge(q, a, b))
			return 0;
	}
	return 1;
}

/* elv_queue_check(): each stage's own check, and the core's counts agree with theirs. */
static int elv_stages_check(const struct elv_queue *q)
{
	unsigned i;
	uint32_t total = 0;
	int n;

	for (i = 0; i < ELV_STAGE_NR; i++) {
		const struct elv_stage_ops *ops = q->stage[i].ops;

		if (!ops) {
			if (q->stage[i].nr_held || ((q->stages | q->stage_hear) & (1u << i)))
				return ELV_EINVAL;
			continue;
		}
		if (!(q->stages & (1u << i)) ||
		    !(q->stage_hear & (1u << i)) != !(ops->dispatched || ops->completed))
			return ELV_EINVAL;
		n = ops->check(q);
		if (n < 0 || (uint32_t)n != q->stage[i].nr_held)
			return ELV_EINVAL;
		total += (uint32_t)n;
	}
	/* The shortcuts elv_add() and the pump take follow from the slots. */
	if (q->stage_one != elv_stage_one(q) || q->stage_sole != elv_stage_sole(q))
		return ELV_EINVAL;
	return total == q->nr_staged ? 0 : ELV_EINVAL;
}

/*
 * elv_add() with stages: every stage may refuse the request first, so that a refusal changes
 * nothing (the clock included); then the stages in order may hold it.
 */
static int elv_stages_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	uint64_t saved_now = q->now, saved_offset = q->time_offset;
	uint8_t saved_set = q->clock_set;
	int r = elv_stages_validate(q, rq);

	if (r < 0)
		return r;
	now = elv_queue_clock(q, now);
	rq->time = now;
	rq->seq = q->seq;
	r = elv_stages_admit(q, rq, now, 0);
	if (r < 0) {
		q->now = saved_now;
		q->time_offset = saved_offset;
		q->clock_set = saved_set;
		return r;
	}
	elv_add_accept(q, rq, now);
	return r == ELV_STAGE_HELD ? 0 : elv_stage_enqueue(q, rq, now);
}

static const struct elv_stage_vt elv_stage_vt = {
	.add = elv_stages_add,
	.dispatched = elv_stages_dispatched,
	.completed = elv_stages_completed,
	.pump = elv_stages_pump,
	.cancel = elv_stages_cancel,
	.take_all = elv_stages_take_all,
	.next_event = elv_stages_next_event,
	.allow_merge = elv_stages_allow_merge,
	.check = elv_stages_check,
};
