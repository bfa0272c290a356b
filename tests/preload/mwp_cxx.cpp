// tests/preload/mwp_cxx.cpp: a C++ program for the preload "cxx" case. Its
// time goes to a member function of a class in a namespace, so that a report
// must show that function's name demangled (mwtest::Grid::fill(int)) while
// the ELF symbol stays as the binary has it (_ZN6mwtest4Grid4fillEi).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mwtest {
struct Grid {
    std::vector<double> cells;
    explicit Grid(std::size_t n);
    double fill(int k);
};

__attribute__((noinline)) Grid::Grid(std::size_t n) : cells(n) {}

__attribute__((noinline)) double Grid::fill(int k)
{
    double s = 0;
    for (std::size_t i = 0; i < cells.size(); i += 8) {
        cells[i] += k;
        s += cells[i];
    }
    return s;
}
} // namespace mwtest

int main(int argc, char **argv)
{
    int ms = argc > 1 ? std::atoi(argv[1]) : 300;
    mwtest::Grid g(std::size_t(1) << 20);
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    double s = 0;
    int k = 0;
    while (std::chrono::steady_clock::now() < end)
        s += g.fill(k++);
    std::printf("filled %s\n", k > 0 && s > 0 ? "yes" : "no");
    return 0;
}
