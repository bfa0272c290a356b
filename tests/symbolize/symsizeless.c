/*
 * tests/symbolize/symsizeless.c: a sizeless exported symbol (hand-written
 * assembly without .size, as in libc's string functions) followed by a
 * static function with no exported symbol. Stripped to .dynsym by
 * tests/symbolize/CMakeLists.txt: the static function's addresses must not be
 * named after the sizeless symbol (it is another function by CFI), while the
 * sizeless symbol's own addresses keep its name.
 */
#include <stddef.h>

__asm__(".text\n"
        ".globl mw_sizeless\n"
        ".type mw_sizeless, @function\n"
        "mw_sizeless:\n"
        ".cfi_startproc\n"
        "  nop\n  nop\n  nop\n  nop\n"
        "  ret\n"
        ".cfi_endproc\n");

__attribute__((noinline, used)) static int sl_static(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += i * x;
    return s;
}

/* sl_static's address, for the test to find it in the stripped copy */
__attribute__((visibility("default"))) void *mw_sl_static_addr(void)
{
    return (void *)&sl_static;
}
