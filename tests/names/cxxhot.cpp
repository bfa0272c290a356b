// tests/names/cxxhot.cpp: a C++ shared library whose hot loop is a function
// of an anonymous namespace (no dynamic symbol of its own), just after an
// exported one (hotns::before(double)); -fno-toplevel-reorder keeps that
// order. Unstripped, the report names the loop demangled
// (hotns::(anonymous namespace)::kernel(double*, unsigned long)); stripped,
// it is libmwcxxhot.so@0x..., with the hint "hotns::before(double)+0x..."
// demangled, offset and all (tests/names/test_names.sh, case cxx).
#include <chrono>
#include <cstddef>

namespace hotns {
__attribute__((visibility("default"))) double before(double x);
__attribute__((visibility("default"))) double run(double *a, std::size_t n, double seconds);

double before(double x)
{
    return x * 2;
}

namespace {
__attribute__((noinline)) double kernel(double *a, std::size_t n)
{
    double s = 0;
    for (std::size_t i = 0; i < n; i++) {
        a[i] = a[i] * 1.0000001 + 1e-9;
        s += a[i];
        if (a[i] > 1e300)
            a[i] = 0;
        s *= 0.5;
    }
    return s;
}
} // namespace

double run(double *a, std::size_t n, double seconds)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    double s = 0;
    while (std::chrono::steady_clock::now() < end)
        s += kernel(a, n);
    return s;
}
} // namespace hotns
