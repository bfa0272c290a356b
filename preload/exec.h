/*
 * preload/exec.h: exec and spawn, and the environment children get.
 * Owner: exec.c.
 */
#ifndef MW_PRELOAD_EXEC_H
#define MW_PRELOAD_EXEC_H

/* LD_PRELOAD without libmemwatch.so in this process's environment, so that
 * children do not load it (MEMWATCH_FOLLOW=0, MEMWATCH_ENABLE=0).
 * [not AS-safe] (setenv: constructor). */
void mwp_env_unfollow_self(void);

#endif
