# JSON text to R lists, with the conversion used for the core's results (src/dpmu_r.cpp).
# Internal: the tests read the output of the dpmu command with it.
parse_json <- function(text) .Call(dpmu_parse_json_c, as.character(text))
