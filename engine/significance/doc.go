// Package significance holds the error bars and paired tests Assay puts on
// pass rates, so a report can say whether a change is real or the noise of
// a small case set:
//
//   - [Wilson]: the 95% Wilson score interval of a pass rate of n
//     independent single samples (c passed of n). Assumes each case is an
//     independent Bernoulli trial with the same pass probability; unlike
//     the normal (Wald) interval it stays inside [0, 1] and is not empty
//     at 0/n and n/n.
//   - [Clustered]: the 95% interval of a pass rate measured with repeats.
//     The k samples of one case are not independent, so the unit is the
//     case: the mean of the per-case pass rates ± 1.96 · sqrt(var/n), var
//     the sample variance (n − 1 denominator) of the per-case rates.
//     Assumes cases are independent and n large enough for the normal
//     approximation of the mean; undefined for fewer than two cases.
//   - [Compare] with [McNemarExact]: the exact McNemar test of paired
//     single samples (the same cases, base and head). Only discordant
//     cases count: fixed (fail → pass) and broken (pass → fail); under the
//     null hypothesis each is a fair coin, so the two-sided p-value is
//     min(1, 2 · Σ_{i=0}^{min(f,b)} C(f+b, i) / 2^(f+b)), 1 when no case
//     is discordant. Exact, so valid for any number of cases.
//   - [Compare] with [PairedMean]: the paired test of per-case pass rates
//     measured with repeats: d_i = head rate − base rate, delta = mean d_i,
//     SE = sqrt(var(d)/n) (n − 1 variance), and the two-sided p-value of
//     the normal approximation, erfc(|delta/SE| / √2). Assumes independent
//     cases and a mean close to normal (a few dozen cases); with a handful
//     of cases it is optimistic. p is 1 when SE and delta are 0, 0 when SE
//     is 0 and delta is not (every case moved by the same amount), and 1
//     for fewer than two paired cases.
//   - [MinFlips]: the smallest number of cases that must flip one way
//     before a test could call the change significant at alpha on n cases
//     (0 when no change on n cases can be), so a user knows when a case
//     set is too small to tell anything.
//
// Both tests also give delta and its 95% interval in pass-rate units
// (−1..1): delta ± 1.96 · sqrt(var(d)/n), d_i ∈ {−1, 0, 1} for single
// samples.
//
// # Determinism
//
// The same evidence gives the same bytes on every machine: ratios of
// integers are exact (math/big), and what needs a square root or the
// normal tail is computed with math/big.Float at a fixed precision (no
// float64 expression a compiler could fuse into a multiply-add, no libm).
// Figures are written with one rule, [Figure]: rounded to four decimals
// (half to even on the exact binary value), and p-values are compared with
// alpha before rounding. No figure comes from random resampling.
package significance
