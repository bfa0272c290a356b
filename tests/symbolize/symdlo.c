/* tests/symbolize/symdlo.c: a module test_symbolize loads with dlopen. */
enum { SYM_DL_LINE = __LINE__ + 2 };
__attribute__((noinline)) int sym_dl_func(int x)
{
    unsigned s = 1;
    for (int i = 0; i < x; i++)
        s = s * 3u + (unsigned)i;
    return (int)(s & 0x7fffffff);
}
int sym_dl_line(void) { return SYM_DL_LINE; }
