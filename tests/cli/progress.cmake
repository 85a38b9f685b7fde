# The progress line of `kiln compile` (cli/progress.h): on a terminal, a build that takes more
# than a second shows "kiln: compiling FILE: build N s", erased when done; through a pipe there
# is none. util-linux's `script` gives the command a pseudo-terminal.
#   cmake -DKILN=<kiln> -DGRAPH=<graph.json> -DOUT=<dir> -P progress.cmake
find_program(SCRIPT script REQUIRED)
file(REMOVE_RECURSE "${OUT}")
# --no-cache: a real compile; KILN_PROGRESS_DELAY=0 shows the line at once, however fast this
# machine (or its ccache) compiles — the default one-second wait made the test depend on speed.
set(command "KILN_PROGRESS_DELAY=0 '${KILN}' compile '${GRAPH}' -o '${OUT}/tty' --no-cache")
execute_process(COMMAND ${SCRIPT} -q -e -c "${command}" /dev/null
                RESULT_VARIABLE rc OUTPUT_VARIABLE tty ERROR_VARIABLE tty_err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kiln compile on a terminal failed (${rc}):\n${tty}\n${tty_err}")
endif()
string(ASCII 27 esc)
if(NOT tty MATCHES "\rkiln: compiling [^\r]*: (rewrite |generate |build )?[0-9]+\\.[0-9] s${esc}\\[K")
  message(FATAL_ERROR "no progress line on a terminal:\n${tty}")
endif()
if(NOT tty MATCHES "\r${esc}\\[Kwrote ")
  message(FATAL_ERROR "the progress line is not erased before kiln's own output:\n${tty}")
endif()
execute_process(COMMAND "${KILN}" compile "${GRAPH}" -o "${OUT}/pipe" --no-cache
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR err MATCHES "compiling")
  message(FATAL_ERROR "through a pipe kiln must print no progress (exit ${rc}):\n${err}")
endif()
