// Matrix products on a GPU (Dot, BatchedDot, Blockwise of Dot, Gemv, Gemm, Ger), shared by the
// GPU backends: the C++ backend's product templates (templates/cpp/ops/dot*.mustache,
// blas_*.mustache) call kg::product / kg::rank1_update on kg::Mat views, here of device
// buffers. float32/float64 products whose operands the device's BLAS can read in place go to
// it (kg::device_gemm, from this backend's device_blas.hpp ahead of this file: CLBlast or
// cuBLAS); the rest (integer, bool and mixed dtypes, layouts without a leading dimension:
// zero, negative or no unit stride) to the node's tiled kernel (templates/gpu/matmul.mustache).
// Embedded only in sources whose graphs have a product.
#include <algorithm>
#include <initializer_list>
#include <type_traits>

namespace kg {

/// A strided matrix view of a device buffer: element (i, j) at data + i * rs + j * cs (strides
/// in elements, any sign), as kg::Mat of the C++ backend.
template <typename T>
struct Mat {
  DevPtr<std::remove_const_t<T>> data;
  int64_t rows, cols, rs, cs;
};

/// The C++ backend's scratch buffers: device products read their operands in place.
struct ProductScratch {};

/// A product operand's shape in an error message.
struct NamedShape {
  const char* name;
  const int64_t* shape;
  int ndim;
};

/// Fails (KILN_ERR_BROADCAST) with "<what>: x has shape (2, 3), y has shape (4,)<tail>", the
/// C++ backend's words (templates/cpp/prologue/blas.hpp).
inline int32_t fail_shapes(Ctx* ctx, const char* what, std::initializer_list<NamedShape> shapes,
                           const char* tail = "") {
  char text[sizeof ctx->error];
  int pos = std::snprintf(text, sizeof text, "%s: ", what);
  const char* sep = "";
  for (const NamedShape& s : shapes) {
    char shape[256];
    shape_text(shape, sizeof shape, s.shape, s.ndim);
    if (pos < 0 || static_cast<size_t>(pos) >= sizeof text) break;
    pos += std::snprintf(text + pos, sizeof text - static_cast<size_t>(pos), "%s%s has shape %s", sep, s.name, shape);
    sep = ", ";
  }
  return fail(ctx, KILN_ERR_BROADCAST, "%s%s", text, tail);
}

/// A 0-d device input's value converted to T (Dot22Scalar's, Gemv's, Gemm's and Ger's scalars;
/// one blocking read).
template <typename T, typename S, int N>
inline int32_t read_scalar(Ctx* ctx, const DTensor<S, N>& t, T& out) {
  S v{};
  KILN_TRY(read_element(ctx, t, 0, v));
  out = kiln_scalar::convert<T>(v);
  return KILN_OK;
}

/// The in-place BLAS layout of `a` (one unit stride, the other a valid leading dimension);
/// false when there is none (negative or zero strides, or no unit stride).
template <typename T>
inline bool device_blas_layout(const Mat<T>& a, DeviceBlasLayout& out) {
  const int64_t row_ld = std::max<int64_t>(a.cols, 1), col_ld = std::max<int64_t>(a.rows, 1);
  if (a.cols <= 1 || a.cs == 1) {
    const int64_t ld = a.rows <= 1 ? row_ld : a.rs;
    if (ld >= row_ld) {
      out = {false, ld};
      return true;
    }
  }
  if (a.rows <= 1 || a.rs == 1) {
    const int64_t ld = a.cols <= 1 ? col_ld : a.cs;
    if (ld >= col_ld) {
      out = {true, ld};
      return true;
    }
  }
  return false;
}

/// c = alpha * x @ y + beta * c as the reference evaluator computes it, for an m×k x and a k×n
/// y of any strides and element types (converted to T like astype); c is m×n and is not read
/// when beta is 0. `kernel` is the node's tiled kernel (templates/gpu/matmul.mustache).
template <typename T, typename K, typename X, typename Y>
inline int32_t product(Ctx* ctx, K kernel, T alpha, Mat<const X> x, Mat<const Y> y, T beta, Mat<T> c,
                       ProductScratch&) {
  const int64_t m = c.rows, n = c.cols, k = x.cols;
  if (m == 0 || n == 0) return KILN_OK;
  if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, double>) && std::is_same_v<X, T> &&
                std::is_same_v<Y, T>) {
    DeviceBlasLayout a, b;
    // c must be row-major (unit column stride) with a leading dimension BLAS accepts.
    const int64_t ldc = m <= 1 ? n : c.rs;
    if (k > 0 && (n <= 1 || c.cs == 1) && ldc >= n && device_blas_layout(x, a) && device_blas_layout(y, b)) {
      bool done = false;
      KILN_TRY(device_gemm(ctx, m, n, k, alpha, x.data, a.trans, a.ld, y.data, b.trans, b.ld, beta, c.data, ldc, done));
      if (done) return KILN_OK;
    }
  }
  using S = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const int64_t tiles = ((m + 15) / 16) * ((n + 15) / 16);
  return launch(ctx, kernel, groups_cap(tiles), kGroup, x.data, y.data, c.data, m, n, k, x.rs, x.cs, y.rs, y.cs, c.rs,
                c.cs, static_cast<S>(alpha), static_cast<S>(beta));
}

/// The batch c_b = x_b @ y_b for b < count (operand b at its data + b * its batch stride) in one
/// strided-batched BLAS call (kg::device_gemm_batched: CLBlast's or cuBLAS's) when product
/// would give each element to BLAS and the batch strides allow it: x's and y's at or above 0
/// (0 broadcasts), c's batch elements apart. Otherwise `done` stays false and the caller loops
/// over the batch (product per element: the tiled kernel, or BLAS one element at a time).
template <typename T, typename X, typename Y>
inline int32_t product_batched(Ctx* ctx, int64_t count, Mat<const X> x, int64_t sx, Mat<const Y> y, int64_t sy, Mat<T> c,
                               int64_t sc, bool& done) {
  done = false;
  if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, double>) && std::is_same_v<X, T> &&
                std::is_same_v<Y, T>) {
    const int64_t m = c.rows, n = c.cols, k = x.cols;
    if (count < 2 || m == 0 || n == 0 || k == 0 || sx < 0 || sy < 0) return KILN_OK;
    DeviceBlasLayout a, b;
    const int64_t ldc = m <= 1 ? n : c.rs;
    if ((n <= 1 || c.cs == 1) && ldc >= n && sc >= (m - 1) * ldc + n && device_blas_layout(x, a) &&
        device_blas_layout(y, b))
      return device_gemm_batched(ctx, count, m, n, k, T(1), x.data, a.trans, a.ld, sx, y.data, b.trans, b.ld, sy, T(0),
                                 c.data, ldc, sc, done);
  }
  return KILN_OK;
}

/// c += alpha * outer(x, y) for a column x (m×1), a row y (1×n) and c (m×n): the product
/// with k = 1 and beta = 1.
template <typename T, typename K>
inline int32_t rank1_update(Ctx* ctx, K kernel, T alpha, Mat<const T> x, Mat<const T> y, Mat<T> c, ProductScratch& s) {
  return product(ctx, kernel, alpha, x, y, T(1), c, s);
}

}  // namespace kg
