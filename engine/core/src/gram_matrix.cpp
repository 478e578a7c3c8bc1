#include "dpmu/core/gram_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpmu/core/checks.hpp"

namespace dpmu::core {

GramAccumulator::GramAccumulator(int columns, double lower, double upper, bool centre)
    : columns_(columns), lower_(lower), upper_(upper), centre_(centre) {
  constexpr const char* fn = "GramAccumulator";
  if (columns < 2) throw_invalid(fn, "columns is " + std::to_string(columns) + ", but must be >= 2 (p + 1)");
  check_finite(fn, "lower", lower);
  check_finite(fn, "upper", upper);
  if (!(lower < 0.0)) throw_domain(fn, "lower", lower, "< 0");
  if (!(upper > 0.0)) throw_domain(fn, "upper", upper, "> 0");
  mean_ = Eigen::VectorXd::Zero(columns);
  lower_gram_ = Eigen::MatrixXd::Zero(columns, columns);
}

void GramAccumulator::add(const Eigen::Ref<const Eigen::MatrixXd>& rows) {
  constexpr const char* fn = "GramAccumulator::add";
  if (rows.cols() != columns_) {
    throw_invalid(fn,
                  "rows has " + std::to_string(rows.cols()) + " columns, but must have " + std::to_string(columns_));
  }
  const Eigen::Index b = rows.rows();
  if (b == 0) return;
  if (!rows.allFinite()) throw_domain(fn, "an entry of rows", std::nan(""), "finite");
  std::uint64_t clamped = 0;
  buffer_.resize(b, columns_);
  for (Eigen::Index j = 0; j < columns_; ++j) {
    for (Eigen::Index i = 0; i < b; ++i) {
      const double v = rows(i, j);
      if (v < lower_) {
        buffer_(i, j) = lower_;
        ++clamped;
      } else if (v > upper_) {
        buffer_(i, j) = upper_;
        ++clamped;
      } else {
        buffer_(i, j) = v;
      }
    }
  }
  clamped_ += clamped;
  if (!centre_) {
    lower_gram_.selfadjointView<Eigen::Lower>().rankUpdate(buffer_.transpose());
    rows_ += static_cast<std::uint64_t>(b);
    return;
  }
  const Eigen::VectorXd block_mean = buffer_.colwise().mean().transpose();
  buffer_.rowwise() -= block_mean.transpose();
  Eigen::MatrixXd block = Eigen::MatrixXd::Zero(columns_, columns_);
  block.selfadjointView<Eigen::Lower>().rankUpdate(buffer_.transpose());
  const double na = static_cast<double>(rows_);
  const double nb = static_cast<double>(b);
  const double nt = na + nb;
  const Eigen::VectorXd delta = block_mean - mean_;
  lower_gram_ += block;
  lower_gram_.selfadjointView<Eigen::Lower>().rankUpdate(delta, na * nb / nt);
  mean_ += delta * (nb / nt);
  rows_ += static_cast<std::uint64_t>(b);
}

Eigen::MatrixXd GramAccumulator::gram_matrix() const {
  Eigen::MatrixXd g = lower_gram_.selfadjointView<Eigen::Lower>();
  return g;
}

Eigen::MatrixXd gram_matrix(const Eigen::Ref<const Eigen::MatrixXd>& data, double lower, double upper, bool centre,
                            std::uint64_t* clamped_entries) {
  GramAccumulator acc(static_cast<int>(data.cols()), lower, upper, centre);
  constexpr Eigen::Index kBlock = 4096;
  for (Eigen::Index start = 0; start < data.rows(); start += kBlock) {
    const Eigen::Index b = std::min(kBlock, data.rows() - start);
    acc.add(data.middleRows(start, b));
  }
  if (clamped_entries != nullptr) *clamped_entries = acc.clamped_entries();
  return acc.gram_matrix();
}

}  // namespace dpmu::core
