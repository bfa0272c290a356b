/* cli/cli.h: the subcommands of the memwatch command. Each takes argv with
 * argv[0] = the subcommand's name and returns the process exit status. */
#ifndef MW_CLI_H
#define MW_CLI_H

int mw_cmd_probe(int argc, char **argv);
int mw_cmd_calibrate(int argc, char **argv);
int mw_cmd_record(int argc, char **argv);
int mw_cmd_report(int argc, char **argv);
int mw_cmd_prefetch(int argc, char **argv);
int mw_cmd_export(int argc, char **argv);
int mw_cmd_monitor(int argc, char **argv); /* cli/cmd_monitor.c */

/* A whole decimal number (no trailing text); 0, or -1 when it is not one. */
int mw_parse_long(const char *s, long *v);

#include <stddef.h>

/* cli/check.c: checks made before anything starts; each prints one line and
 * returns -1 on failure (the caller exits 2). */
int mw_cli_check_out_dir(const char *cmd, const char *opt, const char *dir);
int mw_cli_check_out_file(const char *cmd, const char *opt, const char *path);
int mw_cli_check_env(const char *var, const char *val, const char **expect);
int mw_cli_check_environment(const char *cmd);
size_t mw_cli_escape(const char *s, char *out, size_t n);

#endif
