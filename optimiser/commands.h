/* optimiser/commands.h: the `kelvin` subcommands. Each takes argc/argv after the command name
 * (argv[0] is the command name) and returns an exit status (cli.h). */
#ifndef KL_COMMANDS_H
#define KL_COMMANDS_H

int kl_cmd_bounce(int argc, char **argv);

#endif
