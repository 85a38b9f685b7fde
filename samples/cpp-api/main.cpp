// Logistic regression trained by a library kiln compiles at run time, all from C++: the loss
// graph is built with kiln's builder API, its gradient with kiln::grad, and kiln::compile turns
// loss and gradient into one shared library (cached, like `kiln compile`), which the program
// loads and calls for every step of gradient descent. The first step is checked against kiln's
// reference evaluator.
#include <kiln/compiler.h>

#include <cmath>
#include <cstdio>
#include <exception>

namespace {

// A small separable problem: label = (2 x0 - x1 + 0.5 > 0), deterministic.
void make_data(kiln::Array& X, kiln::Array& y, std::int64_t n) {
  X = kiln::Array::empty(kiln::f64, {n, 2});
  y = kiln::Array::empty(kiln::f64, {n});
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = std::sin(0.7 * static_cast<double>(i)) * 2.0, b = std::cos(1.3 * static_cast<double>(i)) * 2.0;
    X.data<double>()[2 * i] = a;
    X.data<double>()[2 * i + 1] = b;
    y.data<double>()[i] = 2.0 * a - b + 0.5 > 0 ? 1.0 : 0.0;
  }
}

// Calls a graph of the library on Arrays (kiln allocates the outputs).
std::vector<kiln::Array> call(const kiln_graph_info& info, kiln_context* ctx, const std::vector<kiln::Array>& in) {
  std::vector<DLTensor> dl;
  for (const auto& a : in) dl.push_back(a.dltensor());
  std::vector<DLManagedTensor*> outs(static_cast<std::size_t>(info.num_outputs), nullptr);
  if (info.call(ctx, dl.data(), outs.data()) != KILN_OK) throw std::runtime_error(info.context_last_error(ctx));
  std::vector<kiln::Array> results;
  for (DLManagedTensor* m : outs)
    results.push_back(kiln::Array::from_dlpack(m->dl_tensor, std::shared_ptr<void>(m, [](void* p) {
      auto* t = static_cast<DLManagedTensor*>(p);
      t->deleter(t);
    })));
  return results;
}

}  // namespace

int main() {
  try {
    using namespace kiln;
    // loss = mean(softplus(-z) + (1 - y) z), z = X w + b: the logistic loss, written stably.
    GraphBuilder g("logreg_step");
    Var X = g.input("X", f64, {-1, 2});
    Var y = g.input("y", f64, {-1});
    Var w = g.input("w", f64, {2});
    Var b = g.input("b", f64, {});
    Var z = dot(X, w) + b;
    Var loss = mean(softplus(-z) + (1.0 - y) * z);
    VarList grads = grad(loss, {w, b});
    g.output(loss, "loss");
    g.output(grads[0], "grad_w");
    g.output(grads[1], "grad_b");
    FunctionGraph fg = g.build();

    CompileOptions options;  // the cpp backend, the default rewrite pipeline, the build cache
    Artifacts compiled = compile(fg.clone(), options);
    std::printf("compiled %s into %s%s\n", compiled.sources.name.c_str(), compiled.build.library_path.c_str(),
                compiled.build.cache_hit ? " (cached)" : "");

    Library so(compiled.build.library_path);
    const kiln_graph_info& info = so.graph("logreg_step");
    kiln_context* ctx = info.context_create();
    Array Xv, yv;
    make_data(Xv, yv, 200);
    std::vector<double> wv = {0.0, 0.0};
    double bv = 0.0, first_loss = 0.0, last_loss = 0.0;
    for (int step = 0; step < 300; ++step) {
      Array wa = Array::empty(f64, {2}), ba = Array::empty(f64, {});
      wa.data<double>()[0] = wv[0];
      wa.data<double>()[1] = wv[1];
      *ba.data<double>() = bv;
      std::vector<Array> out = call(info, ctx, {Xv, yv, wa, ba});
      if (step == 0) {
        // The compiled library agrees with kiln's reference evaluator.
        std::vector<Array> ref = evaluate(fg, {Xv, yv, wa, ba});
        const double diff = std::fabs(*out[0].data<double>() - *ref[0].data<double>());
        std::printf("step 0: loss %.6f (reference evaluator %.6f, difference %.1e)\n", *out[0].data<double>(),
                    *ref[0].data<double>(), diff);
        if (diff > 1e-12) throw std::runtime_error("the compiled loss differs from the reference evaluator");
        first_loss = *out[0].data<double>();
      }
      last_loss = *out[0].data<double>();
      for (int k = 0; k < 2; ++k) wv[static_cast<std::size_t>(k)] -= 0.5 * out[1].data<double>()[k];
      bv -= 0.5 * *out[2].data<double>();
    }
    info.context_destroy(ctx);
    std::printf("after 300 steps: loss %.4f, w = [%.2f, %.2f], b = %.2f\n", last_loss, wv[0], wv[1], bv);
    if (!(last_loss < 0.25 * first_loss)) throw std::runtime_error("the loss did not fall");
    std::printf("ok\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpp_api: %s\n", e.what());
    return 1;
  }
  return 0;
}
