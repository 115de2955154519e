# Script mode (cmake -P): one man page from the built binary's --help, with
# help2man, so the page cannot drift from the help. Variables:
#   EXE  the iopulse binary   SUB  a subcommand, or empty for iopulse(1)
#   OUT  the page to write
# The subcommand's one-line description is the one `iopulse --help` lists.
execute_process(COMMAND ${EXE} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --help exited ${rc}")
endif()
if(SUB)
  string(REGEX MATCH "\n  ${SUB} +([^\n]*)" line "${top}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "iopulse --help does not list '${SUB}'")
  endif()
  set(desc "${CMAKE_MATCH_1}")
  set(help_opt "${SUB} --help")
  set(name "iopulse-${SUB}")
else()
  set(desc "a live I/O monitor for MPI jobs")
  set(help_opt "--help")
  set(name "iopulse")
endif()
execute_process(
  COMMAND help2man --no-info --no-discard-stderr --section 1 --name "${desc}"
          "--help-option=${help_opt}" --version-option=--version ${EXE}
  OUTPUT_VARIABLE page RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man exited ${rc} for ${name}")
endif()
# help2man names the page after the binary: the subcommand's own name
string(REGEX REPLACE "\\.TH IOPULSE " ".TH ${name} " page "${page}")
string(TOUPPER "${name}" upper)
string(REPLACE ".TH ${name} " ".TH ${upper} " page "${page}")
string(REGEX REPLACE "\\.SH NAME\niopulse \\\\- " ".SH NAME\n${name} \\\\- " page "${page}")
if(SUB)
  string(APPEND page ".SH \"SEE ALSO\"\n\\fBiopulse\\fR(1)\n")
else()
  string(APPEND page ".SH \"SEE ALSO\"\n\\fBiopulse-run\\fR(1), \\fBiopulse-top\\fR(1), "
         "\\fBiopulse-jobs\\fR(1), \\fBiopulse-collector\\fR(1), \\fBiopulse-verify\\fR(1), "
         "\\fBiopulse-summary\\fR(1), \\fBiopulse-replay\\fR(1), \\fBiopulse-export\\fR(1); "
         "the documentation in share/doc/iopulse\n")
endif()
file(WRITE "${OUT}" "${page}")
