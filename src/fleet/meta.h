// Pooling per-node results into one fleet result, with the node as a stratum. Pure.
//
// Method: a random-effects meta-analysis of the per-node mean log ratios.
//  * Each node i gives y_i (mean of its pairs' d) and v_i = s_i^2 / n_i (the squared standard
//    error of that mean). Pairs never cross nodes, so every y_i is a within-node comparison.
//  * Between-node variance tau^2 by DerSimonian-Laird (1986): tau^2 = max(0, (Q - (k-1)) / C),
//    C = sum w - sum w^2 / sum w, with fixed-effect weights w_i = 1/v_i.
//  * The pooled mean mu = sum w*_i y_i / sum w*_i, w*_i = 1 / (v_i + tau^2).
//  * Its interval: Hartung-Knapp-Sidik-Jonkman (t with k-1 df on the weighted residual
//    variance), never narrower than the DL normal interval (the "ad hoc" HKSJ correction,
//    Jackson et al. 2017). With a handful of nodes the DL z interval is too narrow (IntHout
//    et al. 2014); HKSJ keeps its coverage.
// Why random effects and not one paired test over all pairs: the nodes are a sample of the
// fleet's machines and the question is "is B faster on this fleet"; a node with many tight
// pairs must not decide alone, and real node-to-node differences must widen the interval,
// not vanish into it. When the nodes agree (tau^2 = 0) it is the inverse-variance fixed
// effect. Heterogeneity is measured and reported beside it (Cochran's Q, its p, I^2), and a
// node that disagrees is named by a leave-one-out test (see LeaveOneOut).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vouch {

// One stratum: a node's mean log ratio and the variance of that mean.
struct Stratum {
  std::string name;
  double mean_log = 0;
  double var_of_mean = 0;  // s^2 / n, floored at kMinStratumVariance
  std::size_t n = 0;
};

// A node whose pairs all give the same d has s = 0; its weight would be infinite. The floor
// is a standard error of 1e-5 in log ratio (0.001 %), far below anything a GPU resolves.
inline constexpr double kMinStratumVariance = 1e-10;

// The stratum of N values (their mean and s^2/n); nullopt when n < 2 or a value is not finite.
std::optional<Stratum> MakeStratum(const std::string& name, std::span<const double> d);

// Floors each stratum's variance at the pooled within-node variance: v_i = max(s_i^2,
// s_pooled^2) / n_i, s_pooled^2 = sum (n_i - 1) s_i^2 / sum (n_i - 1). A node's own s from two
// or three pairs is itself noisy, and a small one by chance would give that node a weight
// (and a leave-one-out z) it has not earned; a node noisier than the rest keeps its own.
void FloorAtPooledVariance(std::vector<Stratum>& strata);

struct MetaResult {
  std::size_t k = 0;  // strata pooled
  double mu_log = 0;  // random-effects pooled mean
  double se_log = 0;  // its standard error (the HKSJ one when wider than DL's)
  double lo_log = 0;  // confidence interval of mu
  double hi_log = 0;
  double confidence = 0.95;
  double tau2 = 0;              // DerSimonian-Laird between-node variance
  double q = 0;                 // Cochran's Q (fixed-effect weights)
  double q_p = 1;               // P(chi^2_{k-1} >= Q)
  double i2 = 0;                // Higgins' I^2 = max(0, (Q - (k-1)) / Q), 0..1
  double fixed_mu_log = 0;      // inverse-variance fixed-effect mean, for comparison
  std::string interval_method;  // "HKSJ t(k-1)" or "DL normal"
};

// nullopt for k < 2 or a non-finite input (one node has its own paired-t interval instead).
std::optional<MetaResult> RandomEffects(std::span<const Stratum> strata, double confidence);

// A node against the pool of the others: z = (y_i - mu_-i) / sqrt(v_i + tau2_-i + se_-i^2),
// the prediction error of node i from the others' random-effects model (a studentised
// deleted residual, Viechtbauer & Cheung 2010). Two-sided normal p, Bonferroni-corrected
// over the k nodes. Needs k >= 3 (the others must be at least two).
struct NodeOutlier {
  std::string name;
  double others_mu_log = 0;  // the others pooled
  double diff_log = 0;       // y_i - mu_-i
  double z = 0;
  double p = 1;             // two-sided, uncorrected
  double p_bonferroni = 1;  // min(1, k p)
  bool outlier = false;     // p_bonferroni < alpha and |diff| beyond the band
};

// ALPHA: 1 - confidence; BAND_LOG: a node is named only when it also differs from the
// others by more than the noise band (a statistically clear 0.1 % is not a disagreement).
std::vector<NodeOutlier> LeaveOneOut(std::span<const Stratum> strata, double alpha,
                                     double band_log);

}  // namespace vouch
