// tests/names/cxxapp.cpp: calls libmwcxxhot's hotns::run for argv[1] seconds.
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace hotns {
double run(double *a, std::size_t n, double seconds);
}

int main(int argc, char **argv)
{
    std::vector<double> a(4096);
    double s = hotns::run(a.data(), a.size(), argc > 1 ? std::atof(argv[1]) : 0.5);
    std::printf("%s\n", s >= 0 ? "done" : "?");
    return 0;
}
