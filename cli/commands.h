/* cli/commands.h: the `kelvin` subcommands. Each takes argc/argv after the command name
 * (argv[0] is the command name) and returns an exit status (cli.h). */
#ifndef KL_COMMANDS_H
#define KL_COMMANDS_H

int kl_cmd_optimise(int argc, char **argv); /* optimiser/cmd_optimise.c */
int kl_cmd_evaluate(int argc, char **argv); /* optimiser/cmd_optimise.c */
int kl_cmd_bounce(int argc, char **argv);
int kl_cmd_simulate(int argc, char **argv); /* optimiser/cmd_simulate.c */
int kl_cmd_sweep(int argc, char **argv);   /* optimiser/cmd_sweep.c */
int kl_cmd_devices(int argc, char **argv); /* optimiser/cmd_devices.c */
int kl_cmd_robot(int argc, char **argv);   /* cli/cmd_robot.c */
int kl_cmd_check(int argc, char **argv);   /* cli/cmd_check.c */
int kl_cmd_fit(int argc, char **argv);     /* cli/cmd_fit.c */

#endif
