/*
 * tests/counters_encode/fake_pfm.c: a shared object named libpfm.so.4 that is
 * not libpfm4 (no pfm_* function), for test_encode's "--nopfm" case: where
 * the library memwatch loads is not libpfm4, encoding fails with that reason
 * (counters/pfm.c) instead of a crash or a silent empty answer.
 */
int mw_fake_pfm_marker(void);
int mw_fake_pfm_marker(void)
{
    return 4;
}
