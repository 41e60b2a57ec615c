# join_paths(<out> <base> <path>...)
#
# Join path segments for files such as libelevator.pc, where a directory is usually written
# relative to ${prefix}. An absolute segment (CMAKE_INSTALL_LIBDIR=/usr/lib64, say) replaces
# everything before it instead of being glued on, so "${prefix}" + "/usr/lib64" gives
# "/usr/lib64" and not "${prefix}//usr/lib64".
function(join_paths out base)
	set(result "${base}")
	foreach(segment IN LISTS ARGN)
		if(segment STREQUAL "")
			continue()
		endif()
		if(IS_ABSOLUTE "${segment}")
			set(result "${segment}")
		elseif(result STREQUAL "")
			set(result "${segment}")
		else()
			string(REGEX REPLACE "/+$" "" result "${result}")
			set(result "${result}/${segment}")
		endif()
	endforeach()
	set(${out} "${result}" PARENT_SCOPE)
endfunction()
