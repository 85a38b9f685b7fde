// kiln runtime, special functions: what the Bessel-function pieces share — Temme's gamma
// combinations for orders |mu| <= 1/2, the large-argument expansion coefficients and Debye's
// uniform expansion for large orders.
#pragma once

#include <cmath>

#include "kiln/runtime/special/common.hpp"

namespace kiln_special {

namespace bessel_detail {

/// Taylor coefficients of 1/Gamma(1 + z) at 0 (|z| <= 1/2 needs 26 for 1e-17).
constexpr double kRecipGamma1p[] = {
    1.0, 0.57721566490153286061, -0.65587807152025388108, -0.042002635034095235529,
    0.1665386113822914895, -0.042197734555544336748, -0.0096219715278769735621,
    0.0072189432466630995424, -0.0011651675918590651121, -0.00021524167411495097282,
    0.00012805028238811618615, -2.0134854780788238656e-5, -1.2504934821426706573e-6,
    1.1330272319816958824e-6, -2.0563384169776071035e-7, 6.1160951044814158179e-9,
    5.0020076444692229301e-9, -1.1812745704870201446e-9, 1.0434267116911005105e-10,
    7.782263439905071254e-12, -3.6968056186422057082e-12, 5.100370287454475979e-13,
    -2.0583260535665067832e-14, -5.3481225394230179824e-15, 1.2267786282382607902e-15,
    -1.1812593016974587695e-16};

/// Temme's gamma combinations for |mu| <= 1/2: 1/Gamma(1 + mu), 1/Gamma(1 - mu),
/// gamma1 = (1/Gamma(1 - mu) - 1/Gamma(1 + mu)) / (2 mu) and gamma2 = (1/Gamma(1 - mu) +
/// 1/Gamma(1 + mu)) / 2, the first two without cancellation at mu = 0 (odd and even parts of
/// the Taylor series).
struct TemmeGammas {
  double plus, minus, gamma1, gamma2;
};
inline TemmeGammas temme_gammas(double mu) {
  double odd = 0, even = 0;
  const double mu2 = mu * mu;
  for (int k = 25; k >= 0; --k) {
    if (k % 2) odd = odd * mu2 + kRecipGamma1p[k];
    else even = even * mu2 + kRecipGamma1p[k];
  }
  // 1/Gamma(1 + mu) = even(mu^2) + mu odd(mu^2), 1/Gamma(1 - mu) = even - mu odd, where
  // even = sum c_2j mu^2j and odd = sum c_(2j+1) mu^2j.
  return {even + mu * odd, even - mu * odd, -odd, even};
}

/// U_k(t) = t^k sum_j kDebye[k][j] t^(2j), the polynomials of Debye's uniform expansions
/// (DLMF 10.41.10), k < 11 (computed exactly from U_(k+1) = t^2 (1 - t^2) U_k' / 2 +
/// int_0^t (1 - 5 s^2) U_k(s) ds / 8).
constexpr int kDebyeTerms = 11;
constexpr double kDebye[kDebyeTerms][11] = {
    {1},
    {0.125, -0.20833333333333334},
    {0.0703125, -0.40104166666666669, 0.3342013888888889},
    {0.0732421875, -0.89121093750000002, 1.8464626736111112, -1.0258125964506173},
    {0.112152099609375, -2.3640869140624998, 8.78912353515625, -11.207002616222994,
     4.6695844234262474},
    {0.22710800170898438, -7.3687943594796321, 42.534998745388457, -91.818241543240021,
     84.636217674600729, -28.212072558200244},
    {0.57250142097473145, -26.491430486951554, 218.19051174421159, -699.57962737613252,
     1059.9904525279999, -765.25246814118168, 212.57013003921713},
    {1.7277275025844574, -108.09091978839466, 1200.9029132163525, -5305.646978613403,
     11655.393336864534, -13586.550006434138, 8061.7221817373093, -1919.4576623184071},
    {6.074042001273483, -493.915304773088, 7109.5143024893641, -41192.65496889755,
     122200.46498301746, -203400.17728041555, 192547.00123253153, -96980.598388637518,
     20204.291330966149},
    {24.380529699556064, -2499.8304818112097, 45218.768981362729, -331645.17248456361,
     1268365.2733216248, -2813563.2265865342, 3763271.2976564039, -2998015.9185381066,
     1311763.6146629772, -242919.18790055133},
    {110.01714026924674, -13886.08975371704, 308186.40461266239, -2785618.1280864547,
     13288767.166421818, -37567176.660763353, 66344512.274729028, -74105148.211532652,
     50952602.492664643, -19706819.118432228, 3284469.8530720379},
};

/// sum_k U_k(t) / nu^k and sum_k (-1)^k U_k(t) / nu^k, for Debye's expansions of I and K.
inline void debye_sums(double nu, double t, double& plus, double& alternating) {
  const double t2 = t * t;
  double power = 1.0, tk = 1.0;
  plus = alternating = 0;
  for (int k = 0; k < kDebyeTerms; ++k) {
    double u = 0;
    for (int j = k; j >= 0; --j) u = u * t2 + kDebye[k][j];
    u *= tk * power;
    plus += u;
    alternating += (k % 2 ? -u : u);
    tk *= t;
    power /= nu;
  }
}

/// The terms a_k(nu) / x^k = prod_(j<=k) (4 nu^2 - (2j - 1)^2) / (8 j x) of the large-argument
/// expansions of I, K, J and Y: calls term(k, value) until it returns false or, past k = nu
/// (before which the terms may rise), they begin to grow again (the expansions are asymptotic).
template <typename F>
void large_argument_terms(double nu, double x, int max_terms, F term) {
  const double mu4 = 4 * nu * nu;
  double t = 1.0, previous = kInf;
  for (int k = 0; k < max_terms; ++k) {
    if (k > 0) t *= (mu4 - double(2 * k - 1) * double(2 * k - 1)) / (8.0 * k * x);
    if (std::fabs(t) > previous && k > nu + 1) break;
    previous = std::fabs(t);
    if (!term(k, t)) break;
  }
}

}  // namespace bessel_detail

}  // namespace kiln_special
