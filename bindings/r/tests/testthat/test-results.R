results_file <- function() {
  path <- file.path(tempdir(), "dpmu-study.h5")
  if (!file.exists(path)) {
    status <- system2(dpmu_exe(), c("run", repo_file("tests", "fixtures", "export_study.yaml"), "--out", path, "--quiet"),
                      stdout = FALSE, stderr = FALSE)
    if (status != 0) stop("dpmu run failed")
  }
  path
}

test_that("read_results equals dpmu summarize: a column per cell parameter, metric, component, mean, sd, mcse", {
  path <- results_file()
  t <- dpmu::read_results(path)
  s <- cli_json(c("summarize", path))
  expect_s3_class(t, "data.frame")
  params <- intersect(names(t), names(s[[1]]$parameters))  # in declaration order
  expect_setequal(params, names(s[[1]]$parameters))
  expect_equal(names(t), c("cell_key", params, "metric", "component", "component_label", "mean", "sd", "mcse",
                           "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan"))
  rows <- 0
  for (cell in s) {
    for (name in names(cell$metrics)) {
      m <- cell$metrics[[name]]
      metric <- sub("\\[.*$", "", name)
      k <- if (grepl("\\[", name)) as.integer(sub("^.*\\[(\\d+)\\]$", "\\1", name)) else 0L
      row <- t[t$cell_key == cell$cell_key & t$metric == metric & t$component == k, ]
      expect_equal(nrow(row), 1)
      for (key in c("mean", "sd", "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan")) {
        want <- if (is.null(m[[key]])) NA else m[[key]]
        expect_equal(as.double(row[[key]]), as.double(want), tolerance = 0, label = paste(name, key))
      }
      for (p in params) expect_equal(row[[p]], cell$parameters[[p]], label = p)
      rows <- rows + 1
    }
  }
  expect_equal(rows, nrow(t))
  expect_true(rows > 0)
})

test_that("read_replicates gives one row per cell x replicate x component", {
  path <- results_file()
  r <- dpmu::read_replicates(path, "reject_corrected")
  expect_equal(tail(names(r), 5), c("replicate", "metric", "component", "component_label", "value"))
  expect_equal(unique(r$metric), "reject_corrected")
  expect_setequal(unique(r$component_label), c("alpha=0.05", "alpha=0.01"))
  all <- dpmu::read_replicates(path)
  expect_true(nrow(all) > nrow(r))
  expect_error(dpmu::read_replicates(path, "nope"), "nope")
  expect_error(dpmu::read_results(file.path(tempdir(), "missing.h5")), "no file")
})

test_that("without the command, hdf5r reads the same tables (read_results, read_replicates)", {
  skip_if_not_installed("hdf5r")
  path <- results_file()
  expect_identical(dpmu::read_results(path, engine = "hdf5r"), dpmu::read_results(path, engine = "cli"))
  expect_identical(dpmu::read_replicates(path, engine = "hdf5r"), dpmu::read_replicates(path, engine = "cli"))
  expect_identical(dpmu::read_replicates(path, "reject_corrected", engine = "hdf5r"),
                   dpmu::read_replicates(path, "reject_corrected", engine = "cli"))
  expect_error(dpmu::read_replicates(path, "nope", engine = "hdf5r"), "no metric 'nope'")
  # "auto" without the command: hdf5r
  old <- options(dpmu.exe = file.path(tempdir(), "no-such-dpmu"))
  on.exit(options(old))
  withr_env <- Sys.getenv(c("DPMU", "DPMU_EXE", "PATH"))
  Sys.setenv(DPMU = "", DPMU_EXE = "", PATH = "")
  on.exit(do.call(Sys.setenv, as.list(withr_env)), add = TRUE)
  expect_identical(dpmu::read_results(path), dpmu::read_results(path, engine = "hdf5r"))
})
