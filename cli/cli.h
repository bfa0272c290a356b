/* cli/cli.h: the subcommands of the memwatch command. Each takes argv with
 * argv[0] = the subcommand's name and returns the process exit status. */
#ifndef MW_CLI_H
#define MW_CLI_H

int mw_cmd_probe(int argc, char **argv);
int mw_cmd_calibrate(int argc, char **argv);
int mw_cmd_record(int argc, char **argv);
int mw_cmd_report(int argc, char **argv);
int mw_cmd_prefetch(int argc, char **argv);

#endif
