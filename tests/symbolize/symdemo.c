/* tests/symbolize/symdemo.c: a shared library test_symbolize links against. */
static int sym_lib_private[8]; /* a data object only the library's .symtab names */
enum { SYM_LIB_LINE = __LINE__ + 2 };
__attribute__((noinline)) int sym_lib_func(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += i ^ x;
    sym_lib_private[x & 7] += s;
    return s;
}
int sym_lib_line(void) { return SYM_LIB_LINE; }
int *sym_lib_data(void) { return &sym_lib_private[3]; }
