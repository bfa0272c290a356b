/*
 * tests/preload/mwp_noperf.c: runs a command where the kernel refuses
 * perf_event_open, as a container's seccomp profile does (Docker's default
 * one among them): a seccomp filter that makes that one system call fail
 * with the errno given, every other call allowed, inherited by the command
 * and its children. For the "noperf" case: memwatch must record what it can
 * and say why it has no samples.
 * Usage: mwp_noperf ERRNO COMMAND [ARG...]; exits 3 where this kernel or
 * container does not let a process install a seccomp filter.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mwp_noperf ERRNO COMMAND [ARG...]\n");
        return 2;
    }
    unsigned err = (unsigned)atoi(argv[1]);
    struct sock_filter f[] = {
        /* another architecture's system call numbers: allowed as they are */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
        perror("mwp_noperf: seccomp");
        return 3;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
