// The kiln executable loads OpenBLAS when the reference evaluator first calls BLAS or LAPACK,
// not when it starts.
//
// Loaded at start, OpenBLAS costs every kiln command about 12,000 symbol relocations and the
// start of its thread pool: more than all the rest of a `kiln compile` that the cache answers
// (issue 20: a cache hit in at most 10 ms). Most commands never call it.
//
// How: each OpenBLAS function kiln calls is defined here as a one-instruction trampoline that
// jumps through a pointer. The pointer starts at a stub that saves the argument registers, asks
// `bind` for the real function (dlopen of OpenBLAS on the first call, then dlsym), stores it in
// the pointer and jumps to it with the arguments untouched — what the dynamic linker's own lazy
// binding does. No prototype is needed, so the list below is names only.
//
// Only the kiln executable has these (kiln_generator, the tests and programs using
// kiln::compiler link OpenBLAS as usual), and only on x86-64 ELF: CMake links the executable with
// --as-needed, so OpenBLAS is not a dependency of it as long as every OpenBLAS symbol kiln calls
// is listed here. The ctest `cli_openblas_loaded_lazily` fails when one is missing.
#if defined(__x86_64__) && defined(__ELF__) && defined(KILN_OPENBLAS_SONAME)

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

// Every OpenBLAS function kiln's evaluator (kiln/runtime/lapack.hpp, the CBLAS calls) and
// `kiln --version` use.
#define KILN_LAZY_OPENBLAS_SYMBOLS(X)                                                                  \
  X(openblas_get_config)                                                                             \
  X(cblas_sgemm) X(cblas_dgemm) X(cblas_strsm) X(cblas_dtrsm) X(cblas_strsv) X(cblas_dtrsv)          \
  X(spotrf_) X(dpotrf_) X(sgetrf_) X(dgetrf_) X(sgetrs_) X(dgetrs_) X(sgetri_) X(dgetri_)            \
  X(ssysv_) X(dsysv_) X(sposv_) X(dposv_) X(sgtsv_) X(dgtsv_) X(sgeqrf_) X(dgeqrf_) X(sgeqp3_)       \
  X(dgeqp3_) X(sorgqr_) X(dorgqr_) X(ssyevr_) X(dsyevr_) X(ssygvd_) X(dsygvd_) X(ssyevd_) X(dsyevd_) \
  X(sgesdd_) X(dgesdd_) X(sgeev_) X(dgeev_)

extern "C" {

// The real function for the trampoline whose pointer is `slot`: OpenBLAS is opened on the first
// call. Failing to load it is an installation problem, not bad input, and no exception can cross
// the assembly stub: kiln reports it and exits with its internal-error code.
void* kiln_lazy_openblas_bind(void** slot, const char* name) {
  static void* const library = dlopen(KILN_OPENBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  void* function = library ? dlsym(library, name) : nullptr;
  if (!function) {
    const char* why = dlerror();
    std::fprintf(stderr, "kiln: internal error: cannot load %s from " KILN_OPENBLAS_SONAME ": %s\n", name,
                 why ? why : "not found");
    _exit(70);
  }
  __atomic_store_n(slot, function, __ATOMIC_RELEASE);
  return function;
}

// The stubs and the trampolines' pointers (each starts at its stub).
#define KILN_DECLARE_STUB(name) void kiln_lazy_stub_##name();
KILN_LAZY_OPENBLAS_SYMBOLS(KILN_DECLARE_STUB)
#define KILN_DEFINE_SLOT(name) void* kiln_lazy_slot_##name = reinterpret_cast<void*>(&kiln_lazy_stub_##name);
KILN_LAZY_OPENBLAS_SYMBOLS(KILN_DEFINE_SLOT)
}

// Per symbol: the trampoline (the public name), and its stub, which passes the pointer's
// address (r11) and the name (r10) — registers no argument uses — to the common stub.
#define KILN_TRAMPOLINE(name)                                                                       \
  ".globl " #name "\n.type " #name ", @function\n" #name ":\n  jmp *kiln_lazy_slot_" #name "(%rip)\n" \
  "kiln_lazy_stub_" #name ":\n  leaq kiln_lazy_slot_" #name "(%rip), %r11\n"                         \
  "  leaq kiln_lazy_name_" #name "(%rip), %r10\n  jmp kiln_lazy_common\n"
#define KILN_NAME_STRING(name) "kiln_lazy_name_" #name ": .asciz \"" #name "\"\n"

// The common stub keeps every register an argument may be in (rdi, rsi, rdx, rcx, r8, r9,
// xmm0-7, and al, the vector-register count of a variadic call) across the call to bind, then
// jumps to the real function: arguments on the stack were never moved.
asm(".text\n" KILN_LAZY_OPENBLAS_SYMBOLS(KILN_TRAMPOLINE)
    "kiln_lazy_common:\n"
    "  pushq %rbp\n  movq %rsp, %rbp\n"
    "  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n  pushq %r8\n  pushq %r9\n  pushq %rax\n  pushq %r11\n"
    "  subq $128, %rsp\n"
    "  movaps %xmm0, 0(%rsp)\n  movaps %xmm1, 16(%rsp)\n  movaps %xmm2, 32(%rsp)\n  movaps %xmm3, 48(%rsp)\n"
    "  movaps %xmm4, 64(%rsp)\n  movaps %xmm5, 80(%rsp)\n  movaps %xmm6, 96(%rsp)\n  movaps %xmm7, 112(%rsp)\n"
    "  movq %r11, %rdi\n  movq %r10, %rsi\n"
    "  call kiln_lazy_openblas_bind\n"
    "  movq %rax, %r10\n"
    "  movaps 0(%rsp), %xmm0\n  movaps 16(%rsp), %xmm1\n  movaps 32(%rsp), %xmm2\n  movaps 48(%rsp), %xmm3\n"
    "  movaps 64(%rsp), %xmm4\n  movaps 80(%rsp), %xmm5\n  movaps 96(%rsp), %xmm6\n  movaps 112(%rsp), %xmm7\n"
    "  addq $128, %rsp\n"
    "  popq %r11\n  popq %rax\n  popq %r9\n  popq %r8\n  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n"
    "  popq %rbp\n"
    "  jmp *%r10\n"
    ".section .rodata\n" KILN_LAZY_OPENBLAS_SYMBOLS(KILN_NAME_STRING) ".text\n");

#endif
