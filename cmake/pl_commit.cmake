# pl_commit.cmake — run at every build (the pl_commit target): writes OUT with
# PL_COMMIT, the checkout's commit ("-dirty" when tracked files differ from it,
# "unknown" outside a git checkout), and rewrites it only when that changed,
# so that a build after new commits records them without a reconfigure and an
# unchanged build recompiles nothing.
set(c unknown)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SRC} rev-parse --short=12 HEAD OUTPUT_VARIABLE h
                  RESULT_VARIABLE r ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(r EQUAL 0 AND h)
    set(c ${h})
    execute_process(COMMAND ${GIT} -C ${SRC} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE d RESULT_VARIABLE r2 ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(r2 EQUAL 0 AND d)
      set(c ${h}-dirty)
    endif()
  endif()
endif()
set(text "/* pl_commit.h — generated at build time (cmake/pl_commit.cmake). */\n#define PL_COMMIT \"${c}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
