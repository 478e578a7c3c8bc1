# The design matrix and response of a formula, shared by bma and test. A private call (epsilon
# given) builds them from row-local, public operations only (docs/privacy.md, "The R package's
# formula front end"): every design row depends only on the same row of the data and on public
# settings, and the columns, their names, n and p depend only on public settings (the formula,
# the names and types of the data's columns, the declared levels). A non-private call uses
# model.frame / model.matrix as lm does.

# Functions a private formula may call: elementwise, so a row's value depends on that row alone.
dpmu_private_arith <- c("+", "-", "*", "/", "^", "%%", "%/%")
dpmu_private_compare <- c("<", ">", "<=", ">=", "==", "!=")
dpmu_private_logic <- c("&", "|", "!")
dpmu_private_math <- c("log", "log2", "log10", "log1p", "exp", "expm1", "sqrt", "abs", "sign", "floor", "ceiling",
                       "round", "trunc", "sin", "cos", "tan", "as.numeric")
dpmu_private_calls <- c("I", "(", dpmu_private_arith, dpmu_private_compare, dpmu_private_logic, dpmu_private_math,
                        "pmin", "pmax", "ifelse")

# Why a common function is refused, and what to write instead (the message names the term).
dpmu_refusal_hint <- function(fun, term) {
  depends <- "its value for a row depends on other rows of the data"
  switch(fun,
    scale = paste0(depends, " (it centres and scales by the column's mean and SD); give the centre and scale as ",
                   "public numbers, e.g. I((x - 50) / 10)"),
    poly = paste0(depends, " (orthogonal polynomials are centred and scaled by the data); write the powers with a ",
                  "public centre, e.g. I(x - 50) + I((x - 50)^2)"),
    ns = , bs = , `splines::ns` = , `splines::bs` = , `stats::poly` = , `splines::naturalSpline` =
      paste0(depends, " (its knots and scaling come from the data); build the basis from public knots, e.g. ",
             "pmax(x - 40, 0) + pmax(x - 60, 0)"),
    cut = , findInterval = paste0(depends, " (cut(x, k) places its breaks at the data's range) and its levels ",
                                  "depend on the data; use literal cut-offs, e.g. I(x > 40) + I(x > 60)"),
    mean = , median = , sd = , var = , quantile = , min = , max = , range = , sum = , prod = , length = ,
    IQR = , mad = , nrow = , fivenum = paste0("it summarises the whole column, so ", depends,
                                              "; use a literal cut-off or centre (a public number), e.g. I(x > 50)"),
    rank = , order = , sort = , rev = , cumsum = , cumprod = , cummax = , cummin = , diff = , lag = , lead = ,
    ave = , table = , duplicated = , rowsum = paste0(depends, "; derive the column outside the formula from ",
                                                    "that row alone, or use only row-local functions"),
    offset = "an offset is not supported",
    paste0("it is not one of the row-local functions allowed in a private call (",
           paste(setdiff(dpmu_private_calls, "("), collapse = " "), "); see ?bma, 'Private formulas'"))
}

dpmu_term_label <- function(x) paste(deparse(x, width.cutoff = 500L, backtick = !is.symbol(x) && is.language(x)),
                                     collapse = " ")

# Walk one expression of a private formula BEFORE it is evaluated. Returns its static type
# ("numeric", "logical" or "factor") and whether it involves a column of the data. `types` are the
# types of the data's columns (public: the schema), `levels` the declared levels.
dpmu_check_expr <- function(e, term, types, levels, caller) {
  refuse <- function(...) {
    stop(caller, ": in a private call (epsilon given), the term '", term, "' ", ..., call. = FALSE)
  }
  leaf <- function(type, uses) list(type = type, uses = uses)
  if (is.symbol(e)) {
    name <- as.character(e)
    if (name %in% names(types)) return(leaf(types[[name]], TRUE))
    if (name == "pi") return(leaf("numeric", FALSE))
    refuse("uses '", name, "', which is not a column of data: a variable outside the data is not a public ",
           "constant of the analysis; write its value as a literal number, or add it to data as a column")
  }
  if (is.numeric(e) && length(e) == 1 && !is.na(e)) return(leaf("numeric", FALSE))
  if (is.logical(e) && length(e) == 1 && !is.na(e)) return(leaf("logical", FALSE))
  if (is.character(e)) {
    refuse("uses the string \"", e, "\" outside a comparison with a factor column; a string may only be compared ",
           "with a factor, e.g. I(prog == \"academic\")")
  }
  if (!is.call(e)) refuse("contains ", dpmu_term_label(e), ", which is neither a column of data nor a literal number")
  head <- e[[1]]
  fun <- if (is.symbol(head)) as.character(head) else dpmu_term_label(head)
  if (!is.symbol(head) || !(fun %in% dpmu_private_calls)) {
    refuse("uses ", fun, "(): ", dpmu_refusal_hint(fun, term))
  }
  args <- as.list(e)[-1]
  arg_names <- names(args)
  if (is.null(arg_names)) arg_names <- rep("", length(args))
  nargs <- function(k) {
    if (!(length(args) %in% k) || any(nzchar(arg_names))) {
      refuse("calls ", fun, "() with ", length(args), " argument(s); give ", paste(k, collapse = " or "),
             " unnamed argument(s)")
    }
  }
  check <- function(a) dpmu_check_expr(a, term, types, levels, caller)
  not_factor <- function(r, a) {
    if (r$type == "factor") {
      refuse("applies ", fun, "() to the factor ", dpmu_term_label(a), "; compare it with a declared level, e.g. ",
             "I(", dpmu_term_label(a), " == \"", levels[[dpmu_term_label(a)]][1] %||% "level", "\")")
    }
    r
  }
  if (fun %in% c("I", "(")) {
    nargs(1)
    return(check(args[[1]]))
  }
  if (fun %in% dpmu_private_arith) {
    nargs(if (fun %in% c("+", "-")) 1:2 else 2)
    r <- lapply(args, function(a) not_factor(check(a), a))
    return(leaf("numeric", any(vapply(r, `[[`, FALSE, "uses"))))
  }
  if (fun %in% dpmu_private_compare) {
    nargs(2)
    is_string <- vapply(args, is.character, FALSE)
    r <- lapply(seq_along(args), function(i) if (is_string[i]) NULL else check(args[[i]]))
    if (any(is_string)) {
      other <- r[[which(!is_string)[1]]]
      if (all(is_string) || other$type != "factor" || !(fun %in% c("==", "!="))) {
        refuse("compares with a string; a string may only be compared (== or !=) with a factor column, e.g. ",
               "I(prog == \"academic\")")
      }
      column <- dpmu_term_label(args[[which(!is_string)]])
      if (!(args[[which(is_string)]] %in% levels[[column]])) {
        refuse("compares ", column, " with \"", args[[which(is_string)]], "\", which is not one of its declared ",
               "levels (", paste(levels[[column]], collapse = ", "), ")")
      }
      return(leaf("logical", TRUE))
    }
    for (i in seq_along(r)) not_factor(r[[i]], args[[i]])
    return(leaf("logical", any(vapply(r, `[[`, FALSE, "uses"))))
  }
  if (fun %in% dpmu_private_logic) {
    nargs(if (fun == "!") 1 else 2)
    r <- lapply(args, function(a) not_factor(check(a), a))
    return(leaf("logical", any(vapply(r, `[[`, FALSE, "uses"))))
  }
  if (fun %in% dpmu_private_math) {
    extra <- c(log = "base", round = "digits")[fun]
    if (!is.na(extra) && length(args) == 2) {
      # log(x, base) and round(x, digits): the second argument must be a literal number
      if (!(arg_names[2] %in% c("", extra)) || nzchar(arg_names[1]) || !is.numeric(args[[2]]) ||
          length(args[[2]]) != 1) {
        refuse("calls ", fun, "() with a second argument that is not a literal number; write e.g. ", fun, "(x, ",
               if (fun == "log") "2" else "1", ")")
      }
      args <- args[1]
      arg_names <- ""
    }
    nargs(1)
    r <- check(args[[1]])
    if (fun != "as.numeric") not_factor(r, args[[1]])
    return(leaf("numeric", r$uses))
  }
  if (fun %in% c("pmin", "pmax")) {
    na_rm <- arg_names == "na.rm"
    literal_na_rm <- vapply(args[na_rm], function(a) is.logical(a) && length(a) == 1, FALSE)
    if (any(nzchar(arg_names) & !na_rm) || !all(literal_na_rm) || sum(!na_rm) < 1) {
      refuse("calls ", fun, "() with arguments other than values and a literal na.rm")
    }
    r <- lapply(args[!na_rm], function(a) not_factor(check(a), a))
    return(leaf("numeric", any(vapply(r, `[[`, FALSE, "uses"))))
  }
  # ifelse(test, yes, no)
  m <- tryCatch(match.call(base::ifelse, e), error = function(err) NULL)
  if (is.null(m) || length(m) != 4) refuse("calls ifelse() without exactly the arguments test, yes, no")
  test <- not_factor(check(m$test), m$test)
  yes <- not_factor(check(m$yes), m$yes)
  no <- not_factor(check(m$no), m$no)
  if ((yes$uses || no$uses) && !test$uses) {
    refuse("calls ifelse() with a condition that involves no column of data: its value would be the first row's ",
           "for every row; make the condition depend on the row, or drop the ifelse")
  }
  leaf(if (yes$type == "logical" && no$type == "logical") "logical" else "numeric", test$uses || yes$uses || no$uses)
}

# Environment in which a private formula is evaluated: the allowed functions only (a function of
# the same name in the caller's workspace cannot replace them), and pi.
dpmu_private_env <- function() {
  env <- new.env(parent = emptyenv())
  for (f in dpmu_private_calls) assign(f, get(f, envir = baseenv()), envir = env)
  assign("pi", base::pi, envir = env)
  env
}

# Public types of the data's columns (the schema, like the names): numeric, logical or factor (a
# factor or character column). Other classes are refused when a private formula uses them.
dpmu_column_type <- function(col) {
  if (is.factor(col) || is.character(col)) return("factor")
  if (!is.null(dim(col))) return("other")
  if (is.logical(col)) return("logical")
  if (is.numeric(col) && !inherits(col, c("Date", "POSIXt", "difftime"))) return("numeric")
  "other"
}

# Declared levels: a named list of character vectors (all levels, unused ones included, the first
# the baseline of treatment contrasts).
dpmu_check_levels <- function(levels, data, caller) {
  if (is.null(levels)) return(list())
  if (!is.list(levels) || is.null(names(levels)) || any(!nzchar(names(levels))) || anyDuplicated(names(levels))) {
    stop(caller, ": levels must be a named list, one entry per factor column, e.g. ",
         "levels = list(prog = c(\"general\", \"academic\", \"vocational\"))", call. = FALSE)
  }
  for (name in names(levels)) {
    lev <- levels[[name]]
    if (!(name %in% names(data))) {
      stop(caller, ": levels names '", name, "', which is not a column of data", call. = FALSE)
    }
    if (!(is.character(lev) || is.numeric(lev) || is.factor(lev)) || length(lev) < 1 || anyNA(lev) ||
        anyDuplicated(as.character(lev))) {
      stop(caller, ": levels$", name, " must list the column's distinct levels (no NA), e.g. ",
           "levels = list(", name, " = c(\"a\", \"b\", \"c\"))", call. = FALSE)
    }
    if (dpmu_column_type(data[[name]]) != "factor") {
      stop(caller, ": levels$", name, " is declared, but '", name, "' is not a factor or character column",
           call. = FALSE)
    }
    levels[[name]] <- as.character(lev)
  }
  levels
}

# A formula given as one string ("y ~ x1 + x2") becomes a formula in the caller's caller's
# environment; anything else that is not a two-sided formula is an error naming the argument.
dpmu_as_formula <- function(formula, caller, argument = "formula", env = parent.frame(2)) {
  if (is.character(formula)) {
    if (length(formula) != 1 || is.na(formula)) {
      stop(caller, ": ", argument, " must be a formula such as y ~ x1 + x2, or one string \"y ~ x1 + x2\"",
           call. = FALSE)
    }
    f <- tryCatch(stats::as.formula(formula, env = env), error = function(e) NULL)
    if (is.null(f)) {
      stop(caller, ": ", argument, " \"", formula, "\" is not a formula; write it as \"y ~ x1 + x2\"", call. = FALSE)
    }
    formula <- f
  }
  if (!inherits(formula, "formula") || length(formula) != 3) {
    stop(caller, ": ", argument, " needs a response, e.g. y ~ x1 + x2", call. = FALSE)
  }
  formula
}

# Factors with many levels become many predictors (a character column of identifiers, free text):
# say how many columns each creates and what that costs. `lev` is a named list of the levels of the
# factors used (the data's levels in a non-private call, the declared ones in a private call).
dpmu_warn_many_levels <- function(lev, p, caller, limit = 10L) {
  for (name in names(lev)) {
    k <- length(lev[[name]])
    if (k > limit) {
      warning(caller, ": '", name, "' is a factor or character column with ", k, " levels; it becomes ", k - 1L,
              " dummy predictors (", p, " predictors in all",
              if (caller == "dpmu::bma") {
                if (p > 24) {
                  ": too many to enumerate, so model averaging samples the 2^p models by MCMC, bounded by mcmc_max_iterations"
                } else {
                  paste0(": 2^", p, " models")
                }
              },
              "). If it is an identifier or free text, drop it from the formula; otherwise group its values into ",
              "fewer levels", call. = FALSE)
    }
  }
}

#' The design matrix and response of a formula (shared by bma and test).
#' @noRd
dpmu_design <- function(formula, data, na.action, caller, private = FALSE, levels = NULL) {
  if (missing(data)) stop(caller, ": give the data frame as 'data'", call. = FALSE)
  if (!inherits(formula, "formula") || length(formula) != 3) {
    stop(caller, ": the formula needs a response, e.g. y ~ x1 + x2", call. = FALSE)
  }
  if (private) return(dpmu_private_design(formula, data, caller, levels))
  levels <- dpmu_check_levels(levels, data, caller)
  for (name in names(levels)) data[[name]] <- dpmu_declared_factor(data[[name]], levels[[name]], name, caller)
  mf <- stats::model.frame(formula, data = data, na.action = na.action, drop.unused.levels = length(levels) == 0)
  dropped <- attr(mf, "na.action")
  if (!is.null(dropped) && length(dropped) > 0) {
    message(caller, ": ", length(dropped), " of ", nrow(data), " rows have missing values and were removed ",
            "(na.action = ", class(dropped)[1], ")")
  }
  tt <- attr(mf, "terms")
  if (attr(tt, "intercept") != 1) {
    stop(caller, ": the intercept is always included (the data are centred); remove '- 1' / '+ 0' from the formula",
         call. = FALSE)
  }
  if (attr(tt, "response") != 1) stop(caller, ": the formula needs a response, e.g. y ~ x1 + x2", call. = FALSE)
  dpmu_check_response(mf[[1]], formula, caller)
  y <- stats::model.response(mf, "numeric")
  x <- stats::model.matrix(tt, mf)
  assign <- attr(x, "assign")
  keep <- colnames(x) != "(Intercept)"
  contrasts <- attr(x, "contrasts")
  x <- x[, keep, drop = FALSE]
  storage.mode(x) <- "double"
  dpmu_warn_many_levels(stats::.getXlevels(tt, mf), ncol(x), caller)
  list(x = x, y = as.double(y), response = deparse(formula[[2]]), terms = tt, assign = assign[keep], term_factors = attr(tt, "factors"),
       term_labels = attr(tt, "term.labels"), xlevels = stats::.getXlevels(tt, mf), contrasts = contrasts,
       levels = NULL, n = nrow(x), formula = dpmu_term_label(formula))
}

dpmu_check_response <- function(y, formula, caller) {
  if (is.factor(y) || is.character(y)) {
    stop(caller, ": the response must be numeric; ", deparse(formula[[2]]), " is a ",
         if (is.factor(y)) "factor (R would analyse its level codes)" else "character vector",
         ". Code it as numbers yourself, e.g. as.numeric(y == \"yes\") for a binary response, if a linear model ",
         "of those numbers is what you want", call. = FALSE)
  }
}

# A factor with exactly the declared levels (unused ones kept); a value outside them is an error
# (a domain check on the raw input).
dpmu_declared_factor <- function(col, lev, name, caller) {
  vals <- as.character(col)
  if (any(!is.na(vals) & !(vals %in% lev))) {
    stop(caller, ": column '", name, "' has a value that is not among its declared levels (levels$", name,
         "); declare every possible level, or recode the column", call. = FALSE)
  }
  factor(vals, levels = lev, ordered = is.ordered(col))
}

dpmu_private_design <- function(formula, data, caller, levels) {
  if (!is.data.frame(data)) stop(caller, ": in a private call data must be a data frame", call. = FALSE)
  n <- nrow(data)
  # Only the column names are used to expand '.', no value.
  tt <- stats::terms(formula, data = data)
  if (attr(tt, "intercept") != 1) {
    stop(caller, ": the intercept is always included (the data are centred); remove '- 1' / '+ 0' from the formula",
         call. = FALSE)
  }
  if (attr(tt, "response") != 1) stop(caller, ": the formula needs a response, e.g. y ~ x1 + x2", call. = FALSE)
  levels <- dpmu_check_levels(levels, data, caller)
  types <- vapply(data, dpmu_column_type, "")
  vars <- as.list(attr(tt, "variables"))[-1]
  labels <- vapply(vars, dpmu_term_label, "")
  # 1. The whitelist, before anything is evaluated.
  vtypes <- character(length(vars))
  for (i in seq_along(vars)) {
    r <- dpmu_check_expr(vars[[i]], labels[i], types, levels, caller)
    if (!r$uses) {
      stop(caller, ": in a private call (epsilon given), the term '", labels[i], "' uses no column of data",
           call. = FALSE)
    }
    vtypes[i] <- r$type
  }
  if (vtypes[1] == "factor") dpmu_check_response(factor(character()), formula, caller)
  used <- intersect(names(data), unique(unlist(lapply(vars, all.vars))))
  for (name in used) {
    if (types[[name]] == "other") {
      stop(caller, ": column '", name, "' is of class ", class(data[[name]])[1], "; a private formula uses numeric, ",
           "logical, factor or character columns: convert it to numbers first", call. = FALSE)
    }
    if (types[[name]] == "factor" && is.null(levels[[name]])) {
      stop(caller, ": '", name, "' is a ", if (is.factor(data[[name]])) "factor" else "character column",
           " and its levels would come from the data: in a private call (epsilon given) declare its levels, ",
           "all of them, the baseline first: levels = list(", name, " = c(...))", call. = FALSE)
    }
  }
  # 2. Domain checks on the raw input: missing values, values outside the declared levels.
  for (name in used) {
    if (anyNA(data[[name]])) {
      stop(caller, ": column '", name, "' has missing values; a private call never drops rows (n is public): ",
           "fill them by a public rule first, e.g. data$", name, "[is.na(data$", name, ")] <- 0, or remove the ",
           "rows before the analysis and treat the new n as public", call. = FALSE)
    }
  }
  env <- dpmu_private_env()
  cols <- list()
  for (name in used) {
    col <- data[[name]]
    cols[[name]] <- switch(types[[name]],
                           numeric = as.double(unclass(col)),
                           logical = as.logical(unclass(col)),
                           factor = dpmu_declared_factor(col, levels[[name]], name, caller))
  }
  # 3. Evaluation, row by row in effect: every allowed function is elementwise. Warnings (NaNs
  # produced) would depend on the data and are muffled; non-finite values are handled by bma / test.
  frame_env <- list2env(cols, parent = env)
  values <- lapply(seq_along(vars), function(i) {
    v <- withCallingHandlers(eval(vars[[i]], frame_env), warning = function(w) invokeRestart("muffleWarning"))
    v <- switch(vtypes[i], numeric = as.double(v), logical = as.logical(v), factor = v)
    if (length(v) != n) stop(caller, ": internal: the term '", labels[i], "' has length ", length(v), call. = FALSE)
    v
  })
  names(values) <- labels
  mf <- structure(values, class = "data.frame", row.names = c(NA_integer_, -n), terms = tt)
  x <- stats::model.matrix(tt, mf)
  assign <- attr(x, "assign")
  keep <- colnames(x) != "(Intercept)"
  x <- x[, keep, drop = FALSE]
  storage.mode(x) <- "double"
  dimnames(x) <- list(NULL, colnames(x))
  dpmu_warn_many_levels(levels[intersect(names(levels), used[types[used] == "factor"])], ncol(x), caller)
  list(x = x, y = as.double(values[[1]]), response = deparse(formula[[2]]), terms = NULL, assign = assign[keep], term_factors = attr(tt, "factors"),
       term_labels = attr(tt, "term.labels"), xlevels = NULL, contrasts = NULL, levels = if (length(levels)) levels[intersect(names(levels), used)],
       n = n, formula = dpmu_term_label(stats::formula(tt)))
}

# Public bounds as the core reads them, l1, u1, l2, u2, ... (one pair for all columns, or one per
# column: the predictors in order, the response last). One orientation everywhere (bma, plan_bma):
# c(l, u), the flat vector, or a 2 x (p + 1) matrix whose row 1 holds the lower and row 2 the upper
# bounds, one column per design column and the response last (as cbind(c(l1, u1), c(l2, u2), ...)).
# `columns`: p + 1 when known (bma), NULL (plan_bma: the core checks the count).
dpmu_bounds_vector <- function(bounds, columns, caller) {
  if (is.null(bounds)) return(NULL)
  if (is.data.frame(bounds)) bounds <- as.matrix(bounds)
  if (is.matrix(bounds)) {
    shape <- paste0(nrow(bounds), " x ", ncol(bounds))
    want <- if (is.null(columns)) "2 x (p + 1)" else paste0("2 x ", columns)
    if (nrow(bounds) != 2 || (!is.null(columns) && ncol(bounds) != columns)) {
      stop(caller, ": bounds: a matrix of bounds must be ", want, ": row 1 the lower and row 2 the upper bounds, ",
           "one column per design column with the response last, e.g. cbind(c(l1, u1), c(l2, u2), ...); got a ",
           shape, " matrix", if (ncol(bounds) == 2 && nrow(bounds) != 2) " (transpose it with t(bounds))", call. = FALSE)
    }
    return(as.double(bounds))  # column-major: l1, u1, l2, u2, ...
  }
  if (is.list(bounds)) bounds <- unlist(bounds)
  if (!is.numeric(bounds)) {
    stop(caller, ": bounds must be numbers: c(l, u), or a 2 x (p + 1) matrix (row 1 lower, row 2 upper)",
         call. = FALSE)
  }
  as.double(bounds)
}

# Non-finite values derived from valid rows in a private bma (log(0), 1/0, 0/0): -Inf and NaN
# become the column's public lower bound, +Inf its upper bound (bounds: one pair for all columns or
# one pair per column, predictors in order, response last).
dpmu_map_nonfinite <- function(x, y, bounds, caller) {
  p <- ncol(x)
  if (!is.numeric(bounds) || !(length(bounds) %in% c(2, 2 * (p + 1))) || anyNA(bounds)) {
    stop(caller, ": bounds: give l, u (public bounds on the raw values of every column) or l1, u1, ..., l", p + 1,
         ", u", p + 1, " (the ", p, " design columns in order, the response last); ", length(bounds),
         " numbers given", call. = FALSE)
  }
  b <- matrix(if (length(bounds) == 2) rep(bounds, p + 1) else bounds, nrow = 2)
  fix <- function(v, j) {
    v[is.na(v) | v == -Inf] <- b[1, j]
    v[v == Inf] <- b[2, j]
    v
  }
  for (j in seq_len(p)) x[, j] <- fix(x[, j], j)
  list(x = x, y = fix(y, p + 1))
}

# The call as stored and printed: the data argument replaced by its name (or <data>), a formula
# object by its expression (a formula object carries its environment, which may hold the data), a
# function object (do.call) by its name. So do.call(bma, list(f, data = D)) never echoes D.
dpmu_public_call <- function(call, fun) {
  if (!is.symbol(call[[1]]) && !(is.call(call[[1]]) && identical(call[[1]][[1]], as.name("::")))) call[[1]] <- fun
  for (i in seq_along(call)[-1]) {
    a <- call[[i]]
    if (inherits(a, "formula")) {
      attributes(a) <- NULL
      call[[i]] <- a
    } else if (is.data.frame(a) || is.environment(a) || (is.list(a) && !is.null(names(call)) &&
                                                          identical(names(call)[i], "data"))) {
      call[i] <- list(as.name("<data>"))
    }
  }
  if (!is.null(call$data) && !is.symbol(call$data)) call$data <- as.name("<data>")
  call
}

dpmu_data_label <- function(expr) if (is.symbol(expr)) as.character(expr) else "<data>"

# The ledger options passed to the core: ledger (a path, or NULL) and budget ("EPS" or "EPS,DELTA",
# or NULL). The default ledger (options(dpmu.ledger), DPMU_LEDGER) is used for releases only (a
# private call without seed); a ledger given explicitly is always passed, and the core refuses it
# for a run that is not a release.
dpmu_ledger_options <- function(ledger, ledger_given, budget, release, data_label, caller) {
  if (!is.null(ledger) && !(is.character(ledger) && length(ledger) == 1 && !is.na(ledger))) {
    stop(caller, ": ledger must be a file name (a string), or \"\" for no ledger", call. = FALSE)
  }
  if (is.null(ledger) || !nzchar(ledger) || (!ledger_given && !release)) ledger <- NULL
  if (!is.null(budget)) {
    if (is.numeric(budget) && length(budget) %in% 1:2 && all(is.finite(budget))) {
      budget <- paste(sprintf("%.17g", budget), collapse = ",")
    } else if (!(is.character(budget) && length(budget) == 1 && !is.na(budget))) {
      stop(caller, ": budget must be \"EPS\" or \"EPS,DELTA\", or a number or c(epsilon, delta)", call. = FALSE)
    }
    if (is.null(ledger)) {
      stop(caller, ": a budget needs a ledger: give ledger = \"FILE\" or set options(dpmu.ledger = \"FILE\")",
           call. = FALSE)
    }
  }
  # An absolute path: a later setwd() must not open a second ledger for the same data.
  list(ledger = if (!is.null(ledger)) normalizePath(path.expand(ledger), mustWork = FALSE), budget = budget,
       data_label = data_label)
}

# One line on the ledger for print(): charged, or not charged.
dpmu_ledger_line <- function(x) {
  l <- x$ledger
  if (is.null(l)) return("Not charged to any ledger (ledger = / options(dpmu.ledger))\n")
  num <- function(...) {
    for (v in list(...)) if (is.numeric(v) && length(v) >= 1) return(format(v[1], digits = 4))
    "?"
  }
  accountant <- l$accountant %||% "basic"
  if (identical(accountant, "zcdp")) {
    return(paste0("Charged to ledger ", l$path %||% "?", " (epsilon ", num(l$epsilon), "; total rho ",
                  num(l$accounted_total$rho), " of budget rho ", num(l$budget_rho), ", zCDP accountant)\n"))
  }
  tight <- identical(accountant, "tight")
  total <- if (tight) num(l$accounted_total$epsilon) else num(l$total_epsilon, l$totals$epsilon, l$total$epsilon)
  budget <- num(l$budget_epsilon, l$budget$epsilon, l$budget)
  paste0("Charged to ledger ", l$path %||% "?", " (epsilon ", num(l$epsilon), "; total epsilon ", total,
         " of budget ", budget, if (tight) " at its delta, tight accountant" else "", ")\n")
}

`%||%` <- function(a, b) if (is.null(a)) b else a
