# DP model selection (Lei et al. 2018), planning a private test, auditing a release through this
# package, and the privacy-budget ledger: the R faces of the release API (engine/api), the same
# numbers as `dpmu select`, `dpmu plan-test`, `dpmu audit` and `dpmu ledger`.

#' Differentially private model selection of Lei et al. (2018).
#'
#' See man/select.Rd.
#' @export
select <- function(formula, data, epsilon, radius, penalty, data_bound, algorithm = 1, delta = NULL, seed = NULL,
                   levels = NULL, ledger = getOption("dpmu.ledger", Sys.getenv("DPMU_LEDGER", "")), budget = NULL,
                   lcssf_delta = "r2_1pR2", objective_scale = 0.5, noise_factor = 2, variance_floor = 0.01,
                   alg2_selection = "exponential_mechanism") {
  if (missing(data)) stop("dpmu::select: give the data frame as 'data'", call. = FALSE)
  for (a in c("epsilon", "radius", "penalty", "data_bound")) {
    if (eval(call("missing", as.name(a)))) stop("dpmu::select: give ", a, call. = FALSE)
  }
  caller <- "dpmu::select"
  private <- is.null(seed)
  ledger <- dpmu_ledger_options(ledger, !missing(ledger), budget, private, dpmu_data_label(substitute(data)), caller)
  d <- dpmu_design(formula, data, stats::na.fail, caller, private = private, levels = levels)
  if (ncol(d$x) == 0) stop("dpmu::select: the formula has no predictors", call. = FALSE)
  options <- list(algorithm = as.integer(algorithm), epsilon = epsilon, delta = delta, radius = radius,
                  penalty = penalty, data_bound = as.character(data_bound), lcssf_delta = lcssf_delta,
                  objective_scale = objective_scale, noise_factor = noise_factor, variance_floor = variance_floor,
                  alg2_selection = alg2_selection, seed = seed, ledger = ledger$ledger, budget = ledger$budget,
                  data_label = ledger$data_label)
  out <- .Call(dpmu_select_c, d$x, d$y, colnames(d$x), d$response, options)
  out$ledger <- out$settings$ledger
  out$call <- dpmu_public_call(match.call(), quote(dpmu::select))
  class(out) <- "dpmu_select"
  out
}

#' @export
print.dpmu_select <- function(x, ...) {
  s <- x$settings
  cat("\nDP model selection (Lei et al. 2018), algorithm ", s$algorithm, ": ", s$response, " ~ ",
      paste(s$predictors, collapse = " + "), " (no intercept), n = ", s$n, "\n", sep = "")
  m <- x$selected_model$predictors
  cat("Selected model: ", if (length(m) == 0) "(none)" else paste(m, collapse = " + "), "\n", sep = "")
  if (!is.null(x$privacy)) {
    cat(sprintf("epsilon = %g, delta = %g (%s)\n", x$privacy$epsilon, x$privacy$delta, x$privacy$mechanism))
  }
  cat(if (isTRUE(x$private)) "A differentially private release" else
        paste0("Not private: ", paste(unlist(x$private_reason), collapse = "; ")), "\n", sep = "")
  if (isTRUE(x$private)) cat(dpmu_ledger_line(x))
  invisible(x)
}

#' Plan a private test before any budget is spent (Pena & Barrientos 2024, Sec. 4.5).
#'
#' See man/plan_test.Rd.
#' @export
plan_test <- function(n, epsilon, p = 1, p0 = 1, prior = "g-prior", delta = 0, groups = c(2, 5, 10), censor = NULL,
                      r_squared = NULL, simulations = 2000, seed = NULL, g = NULL, a = 3,
                      gaussian_calibration = "exact") {
  if (is.matrix(censor)) censor <- as.vector(t(censor))
  options <- list(n = n, p = as.integer(p), p0 = as.integer(p0), prior = prior, g = g, a = a, epsilon = epsilon,
                  delta = delta, groups = as.double(groups), censor = if (is.null(censor)) NULL else as.double(censor),
                  r_squared = r_squared, simulations = simulations, seed = seed,
                  gaussian_calibration = gaussian_calibration)
  out <- .Call(dpmu_plan_test_c, options)
  rows <- out$settings
  out$settings <- data.frame(
    num_subsets = vapply(rows, function(r) r$num_subsets, 0),
    lower = vapply(rows, function(r) r$censoring_limits[1], 0),
    upper = vapply(rows, function(r) r$censoring_limits[2], 0),
    target = vapply(rows, function(r) r$target, 0),
    bias = vapply(rows, function(r) r$bias, 0),
    variance = vapply(rows, function(r) r$variance, 0),
    mse = vapply(rows, function(r) r$mse, 0),
    mse_mcse = vapply(rows, function(r) r$mse_mcse, 0),
    released_mse = vapply(rows, function(r) r$released_mse, 0),
    probability_at_upper = vapply(rows, function(r) r$probability_at_upper, 0))
  class(out) <- "dpmu_plan_test"
  out
}

#' @export
print.dpmu_plan_test <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nPlan of a private test: n = ", x$n, ", p = ", x$p, ", p0 = ", x$p0, ", prior ", x$prior, ", epsilon = ",
      x$epsilon, ", delta = ", x$delta, ", scenario: ", x$scenario, " (", x$simulations, " simulations)\n\n", sep = "")
  print(format(x$settings, digits = digits), row.names = FALSE)
  r <- x$recommended
  cat("\nRecommended: groups = ", r$num_subsets, ", censor = c(", paste(format(r$censoring_limits, digits = digits),
      collapse = ", "), ") (", r$rule, ")\n", sep = "")
  invisible(x)
}

#' Plan a private model-averaging release before any budget is spent (docs/bma.md, "Planning a release").
#'
#' See man/plan_bma.Rd.
#' @export
plan_bma <- function(n, epsilon, coefficients = NULL, sigma = NULL, bounds = NULL, mechanism = "laplace",
                     delta = NULL, prior = "g_prior", model_prior = "beta-binomial:1,1", simulations = 200,
                     seed = 1, uncertainty = "both", noise_aware_draws = 100, p = NULL, true_model_size = NULL,
                     signal_z = NULL) {
  if (is.matrix(bounds)) bounds <- as.vector(t(bounds))
  options <- list(n = n, p = p, coefficients = if (is.null(coefficients)) NULL else as.double(coefficients),
                  sigma = sigma, bounds = if (is.null(bounds)) NULL else as.double(bounds), mechanism = mechanism,
                  epsilon = epsilon, delta = delta, prior = prior, model_prior = model_prior,
                  noise_aware_draws = noise_aware_draws, simulations = simulations, seed = seed,
                  uncertainty = uncertainty, true_model_size = true_model_size, signal_z = signal_z)
  out <- .Call(dpmu_plan_bma_c, options)
  rows <- list()
  for (analysis in c("plug_in", "noise_aware", "noise_aware_diagnostics")) {
    for (quantity in names(out[[analysis]])) {
      s <- out[[analysis]][[quantity]]
      m <- plan_numbers(s$mean)
      se <- plan_numbers(s$mc_se)
      if (length(se) != length(m)) se <- rep(NA_real_, length(m))
      term <- if (is.null(s$labels)) NA_character_ else as.character(unlist(s$labels))
      rows[[length(rows) + 1L]] <- data.frame(analysis = analysis, quantity = quantity, term = term, mean = m,
                                              mc_se = se, stringsAsFactors = FALSE)
    }
  }
  out$summary <- do.call(rbind, rows)
  rownames(out$summary) <- NULL
  class(out) <- "dpmu_plan_bma"
  out
}

# JSON numbers as doubles, null (an undefined summary) as NA.
plan_numbers <- function(v) {
  if (is.null(v)) return(NA_real_)
  vapply(v, function(x) if (is.null(x)) NA_real_ else as.double(x), 0)
}

#' @export
print.dpmu_plan_bma <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  s <- x$settings
  cat("\nPlan of a private model-averaging release: a simulation from public settings only (no data read,",
      "no budget spent; not a release)\n", sep = " ")
  cat("n = ", s$n, ", p = ", s$p, ", ", s$mechanism, ", epsilon = ", s$epsilon, ", delta = ", s$delta, ", prior ",
      s$prior, ", model prior ", s$model_prior, " (", x$simulation$replicates, " simulations, seed ",
      x$simulation$seed, ")\n", sep = "")
  cat("Assumed beta = (", paste(format(x$truth$beta, digits = digits), collapse = ", "), "), sigma = ",
      format(x$truth$sigma, digits = digits), "\n\n", sep = "")
  print(format(x$summary, digits = digits), row.names = FALSE)
  cat("\nEach mean is over the simulated releases; mc_se is its Monte Carlo standard error.\n")
  invisible(x)
}

#' Audit a release empirically through this package (a lower bound on epsilon).
#'
#' See man/audit.Rd.
#' @export
audit <- function(release, data, neighbour, epsilon, delta = 0, samples = 1000, confidence = 0.95,
                  score = c("laplace", "categorical")) {
  score <- match.arg(score)
  if (!is.function(release)) stop("dpmu::audit: 'release' must be a function of a data frame", call. = FALSE)
  if (!is.data.frame(data) || !is.data.frame(neighbour) || nrow(data) != nrow(neighbour)) {
    stop("dpmu::audit: 'data' and 'neighbour' must be data frames with the same number of rows (neighbours under ",
         "replace-one)", call. = FALSE)
  }
  if (!(is.numeric(samples) && length(samples) == 1 && samples >= 20)) {
    stop("dpmu::audit: samples must be a number >= 20", call. = FALSE)
  }
  draw <- function(d) {
    v <- lapply(seq_len(samples), function(i) as.double(release(d)))
    k <- unique(lengths(v))
    if (length(k) != 1 || k == 0) stop("dpmu::audit: 'release' must return numeric vectors of one length", call. = FALSE)
    matrix(unlist(v), nrow = samples, byrow = TRUE)
  }
  first <- draw(data)
  second <- draw(neighbour)
  out <- .Call(dpmu_audit_c, first, second, list(epsilon = epsilon, delta = delta, confidence = confidence,
                                                 score = score))
  out$claimed <- list(epsilon = epsilon, delta = delta)
  class(out) <- "dpmu_audit"
  out
}

#' @export
print.dpmu_audit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nAudit: ", x$samples_per_data_set, " releases on each data set; event ", x$event, "\n", sep = "")
  cat("epsilon lower bound (", format(100 * x$confidence), "%): ", format(x$epsilon_lower_bound, digits = digits),
      " against the claimed ", format(x$claimed$epsilon, digits = digits), ": ", x$verdict, "\n", sep = "")
  invisible(x)
}

#' Privacy-budget ledgers: create one, change its budget, read it.
#'
#' See man/ledger.Rd.
#' @export
ledger_init <- function(path, budget, accountant = NULL) {
  if (is.null(budget)) stop("dpmu::ledger_init: give the budget (epsilon, or c(epsilon, delta))", call. = FALSE)
  if (!is.null(accountant) && !(is.character(accountant) && length(accountant) == 1 &&
                                accountant %in% c("basic", "tight", "zcdp"))) {
    stop("dpmu::ledger_init: accountant must be \"basic\", \"tight\" or \"zcdp\"", call. = FALSE)
  }
  .Call(dpmu_ledger_init_c, path.expand(path), dpmu_budget_text(budget),
        if (is.null(accountant)) "" else accountant)
  invisible(path)
}

#' @rdname ledger_init
#' @export
ledger_set_budget <- function(path, budget, reason) {
  if (missing(reason) || !nzchar(reason)) stop("dpmu::ledger_set_budget: give the reason (it is recorded)", call. = FALSE)
  .Call(dpmu_ledger_set_budget_c, path.expand(path), dpmu_budget_text(budget), reason)
  invisible(path)
}

#' @rdname ledger_init
#' @export
ledger_summary <- function(path = getOption("dpmu.ledger", Sys.getenv("DPMU_LEDGER", ""))) {
  if (!nzchar(path)) stop("dpmu::ledger_summary: give the ledger's path", call. = FALSE)
  .Call(dpmu_ledger_summary_c, path.expand(path))
}

#' A budget as the core reads it: "EPS" or "EPS,DELTA" (NULL stays NULL).
#' @noRd
dpmu_budget_text <- function(budget) {
  if (is.null(budget)) return(NULL)
  if (is.character(budget) && length(budget) == 1) return(budget)
  if (is.numeric(budget) && length(budget) %in% 1:2 && all(is.finite(budget))) {
      return(paste(sprintf("%.17g", budget), collapse = ","))
  }
  stop("budget must be a number (epsilon), c(epsilon, delta) or a string \"EPS,DELTA\"", call. = FALSE)
}
