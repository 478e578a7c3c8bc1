# The dpmu command and the repository, given by the ctest driver (bindings/r/tests/run_tests.sh).
dpmu_exe <- function() {
  exe <- Sys.getenv("DPMU_EXE")
  if (!nzchar(exe)) skip("DPMU_EXE is not set (the comparisons with the CLI run from ctest)")
  exe
}
repo_file <- function(...) {
  src <- Sys.getenv("DPMU_SOURCE_DIR")
  if (!nzchar(src)) skip("DPMU_SOURCE_DIR is not set")
  file.path(src, ...)
}
# Run `dpmu ARGS` and parse its JSON with the package's own JSON reader (nlohmann-json).
cli_json <- function(args) {
  out <- suppressWarnings(system2(dpmu_exe(), args, stdout = TRUE, stderr = FALSE))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) stop("dpmu ", paste(args, collapse = " "), " failed with status ", status)
  dpmu:::parse_json(paste(out, collapse = "\n"))
}
hsb2_csv <- function() repo_file("experiments", "data", "hsb2.csv")
named <- function(l, names) {
  v <- unlist(l[names])
  names(v) <- names
  v
}
