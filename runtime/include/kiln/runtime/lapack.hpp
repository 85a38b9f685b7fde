// kiln runtime: LAPACK as kiln calls it — the Fortran symbols OpenBLAS exports (so generated
// libraries link libopenblas alone, no LAPACKE), declared with gfortran's hidden length
// arguments for CHARACTER parameters, and thin overloads for float and double.
//
// The reference evaluator and generated code both use this file (the code generator embeds it
// into the generated source when a graph has linear algebra). Self-contained C++17.
#pragma once

#include <cstddef>

// Default visibility: generated code embeds these declarations inside an unnamed namespace,
// where nvcc (the cuda backend) would otherwise make them hidden, so that OpenBLAS's
// definitions cannot satisfy them at link time.
#define KILN_LAPACK_API __attribute__((visibility("default")))
extern "C" {
// Factorizations and solves.
KILN_LAPACK_API void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
KILN_LAPACK_API void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
KILN_LAPACK_API void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
KILN_LAPACK_API void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
KILN_LAPACK_API void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, std::size_t);
KILN_LAPACK_API void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, std::size_t);
KILN_LAPACK_API void sgetri_(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork, int* info);
KILN_LAPACK_API void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork, int* info);
KILN_LAPACK_API void ssysv_(const char* uplo, const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b,
            const int* ldb, float* work, const int* lwork, int* info, std::size_t);
KILN_LAPACK_API void dsysv_(const char* uplo, const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b,
            const int* ldb, double* work, const int* lwork, int* info, std::size_t);
KILN_LAPACK_API void sposv_(const char* uplo, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb,
            int* info, std::size_t);
KILN_LAPACK_API void dposv_(const char* uplo, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
            int* info, std::size_t);
KILN_LAPACK_API void sgtsv_(const int* n, const int* nrhs, float* dl, float* d, float* du, float* b, const int* ldb, int* info);
KILN_LAPACK_API void dgtsv_(const int* n, const int* nrhs, double* dl, double* d, double* du, double* b, const int* ldb, int* info);
// QR.
KILN_LAPACK_API void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
KILN_LAPACK_API void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
KILN_LAPACK_API void sgeqp3_(const int* m, const int* n, float* a, const int* lda, int* jpvt, float* tau, float* work,
             const int* lwork, int* info);
KILN_LAPACK_API void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau, double* work,
             const int* lwork, int* info);
KILN_LAPACK_API void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
KILN_LAPACK_API void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
// The general eigenproblem.
KILN_LAPACK_API void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr, float* wi,
            float* vl, const int* ldvl, float* vr, const int* ldvr, float* work, const int* lwork, int* info,
            std::size_t, std::size_t);
KILN_LAPACK_API void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            std::size_t, std::size_t);
// Symmetric eigenproblems and the SVD.
KILN_LAPACK_API void ssyevr_(const char* jobz, const char* range, const char* uplo, const int* n, float* a, const int* lda,
             const float* vl, const float* vu, const int* il, const int* iu, const float* abstol, int* m, float* w,
             float* z, const int* ldz, int* isuppz, float* work, const int* lwork, int* iwork, const int* liwork,
             int* info, std::size_t, std::size_t, std::size_t);
KILN_LAPACK_API void dsyevr_(const char* jobz, const char* range, const char* uplo, const int* n, double* a, const int* lda,
             const double* vl, const double* vu, const int* il, const int* iu, const double* abstol, int* m,
             double* w, double* z, const int* ldz, int* isuppz, double* work, const int* lwork, int* iwork,
             const int* liwork, int* info, std::size_t, std::size_t, std::size_t);
KILN_LAPACK_API void ssygvd_(const int* itype, const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* b,
             const int* ldb, float* w, float* work, const int* lwork, int* iwork, const int* liwork, int* info,
             std::size_t, std::size_t);
KILN_LAPACK_API void dsygvd_(const int* itype, const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
             double* b, const int* ldb, double* w, double* work, const int* lwork, int* iwork, const int* liwork,
             int* info, std::size_t, std::size_t);
KILN_LAPACK_API void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
KILN_LAPACK_API void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
KILN_LAPACK_API void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u,
             const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info,
             std::size_t);
KILN_LAPACK_API void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             std::size_t);
}

/// Overloads over float and double, taking values instead of Fortran's pointers; each returns
/// LAPACK's INFO. Matrices are column-major, as LAPACK stores them.
namespace kiln_lapack {

inline int potrf(char uplo, int n, float* a, int lda) {
  int info = 0;
  spotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
inline int potrf(char uplo, int n, double* a, int lda) {
  int info = 0;
  dpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}

inline int getrf(int m, int n, float* a, int lda, int* ipiv) {
  int info = 0;
  sgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}
inline int getrf(int m, int n, double* a, int lda, int* ipiv) {
  int info = 0;
  dgetrf_(&m, &n, a, &lda, ipiv, &info);
  return info;
}

inline int getrs(char trans, int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb) {
  int info = 0;
  sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline int getrs(char trans, int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb) {
  int info = 0;
  dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

inline int getri(int n, float* a, int lda, const int* ipiv, float* work, int lwork) {
  int info = 0;
  sgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  return info;
}
inline int getri(int n, double* a, int lda, const int* ipiv, double* work, int lwork) {
  int info = 0;
  dgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  return info;
}

inline int sysv(char uplo, int n, int nrhs, float* a, int lda, int* ipiv, float* b, int ldb, float* work,
                int lwork) {
  int info = 0;
  ssysv_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, work, &lwork, &info, 1);
  return info;
}
inline int sysv(char uplo, int n, int nrhs, double* a, int lda, int* ipiv, double* b, int ldb, double* work,
                int lwork) {
  int info = 0;
  dsysv_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, work, &lwork, &info, 1);
  return info;
}

inline int posv(char uplo, int n, int nrhs, float* a, int lda, float* b, int ldb) {
  int info = 0;
  sposv_(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);
  return info;
}
inline int posv(char uplo, int n, int nrhs, double* a, int lda, double* b, int ldb) {
  int info = 0;
  dposv_(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);
  return info;
}

inline int gtsv(int n, int nrhs, float* dl, float* d, float* du, float* b, int ldb) {
  int info = 0;
  sgtsv_(&n, &nrhs, dl, d, du, b, &ldb, &info);
  return info;
}
inline int gtsv(int n, int nrhs, double* dl, double* d, double* du, double* b, int ldb) {
  int info = 0;
  dgtsv_(&n, &nrhs, dl, d, du, b, &ldb, &info);
  return info;
}

inline int geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork) {
  int info = 0;
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline int geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork) {
  int info = 0;
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}

inline int geqp3(int m, int n, float* a, int lda, int* jpvt, float* tau, float* work, int lwork) {
  int info = 0;
  sgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  return info;
}
inline int geqp3(int m, int n, double* a, int lda, int* jpvt, double* tau, double* work, int lwork) {
  int info = 0;
  dgeqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, &info);
  return info;
}

inline int orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork) {
  int info = 0;
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline int orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork) {
  int info = 0;
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}

/// Eigenvalues (wr + i wi) and right eigenvectors of a general matrix (NumPy's eig: jobvl 'N',
/// jobvr 'V'), column-major.
inline int geev(char jobvl, char jobvr, int n, float* a, int lda, float* wr, float* wi, float* vl, int ldvl,
                float* vr, int ldvr, float* work, int lwork) {
  int info = 0;
  sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, &info, 1, 1);
  return info;
}
inline int geev(char jobvl, char jobvr, int n, double* a, int lda, double* wr, double* wi, double* vl, int ldvl,
                double* vr, int ldvr, double* work, int lwork) {
  int info = 0;
  dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, &info, 1, 1);
  return info;
}

/// All eigenvalues (and with jobz 'V' eigenvectors) of a symmetric matrix by MRRR (SciPy's
/// default eigh driver, "evr").
inline int syevr(char jobz, char uplo, int n, float* a, int lda, float* w, float* z, int ldz, int* isuppz,
                 float* work, int lwork, int* iwork, int liwork) {
  const char range = 'A';
  const float vl = 0, vu = 0, abstol = 0;
  const int il = 0, iu = 0;
  int m = 0, info = 0;
  ssyevr_(&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, &m, w, z, &ldz, isuppz, work, &lwork,
          iwork, &liwork, &info, 1, 1, 1);
  return info;
}
inline int syevr(char jobz, char uplo, int n, double* a, int lda, double* w, double* z, int ldz, int* isuppz,
                 double* work, int lwork, int* iwork, int liwork) {
  const char range = 'A';
  const double vl = 0, vu = 0, abstol = 0;
  const int il = 0, iu = 0;
  int m = 0, info = 0;
  dsyevr_(&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, &m, w, z, &ldz, isuppz, work, &lwork,
          iwork, &liwork, &info, 1, 1, 1);
  return info;
}

/// All eigenvalues (and with jobz 'V' eigenvectors) of a symmetric matrix by divide and conquer
/// (NumPy's eigh driver).
inline int syevd(char jobz, char uplo, int n, float* a, int lda, float* w, float* work, int lwork, int* iwork,
                 int liwork) {
  int info = 0;
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}
inline int syevd(char jobz, char uplo, int n, double* a, int lda, double* w, double* work, int lwork, int* iwork,
                 int liwork) {
  int info = 0;
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}

/// The generalized problem A v = w B v (itype 1) for symmetric A and positive definite B.
inline int sygvd(char jobz, char uplo, int n, float* a, int lda, float* b, int ldb, float* w, float* work,
                 int lwork, int* iwork, int liwork) {
  const int itype = 1;
  int info = 0;
  ssygvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}
inline int sygvd(char jobz, char uplo, int n, double* a, int lda, double* b, int ldb, double* w, double* work,
                 int lwork, int* iwork, int liwork) {
  const int itype = 1;
  int info = 0;
  dsygvd_(&itype, &jobz, &uplo, &n, a, &lda, b, &ldb, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}

/// The SVD by divide and conquer (NumPy's driver).
inline int gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt,
                 float* work, int lwork, int* iwork) {
  int info = 0;
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  return info;
}
inline int gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt,
                 double* work, int lwork, int* iwork) {
  int info = 0;
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  return info;
}

}  // namespace kiln_lapack
