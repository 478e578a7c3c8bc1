library(testthat)
library(dpmu)
test_check("dpmu")
