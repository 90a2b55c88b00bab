/*
 * The process title ps(1) and top(1) show (Redis's set-proc-title): the
 * memory of argv and the environment strings that follow it is reused
 * for the title once the environment and the arguments are copied out of
 * it, as Redis's setproctitle.c (from OpenSSH/nginx) does.
 *
 *   linux, darwin - argv's memory (common/proctitle_argv.c, with each OS's
 *                   own name of the program kept: linux/darwin proctitle.c)
 *   posix         - GB_ENOTSUP (common/proctitle_none.c)
 */
#ifndef GB_PLATFORM_PROCTITLE_H
#define GB_PLATFORM_PROCTITLE_H

/* Once, first thing in main, before anything keeps a pointer into argv or
 * the environment: copies them out of the region the title will use (argv
 * stays valid: its strings are copies after this). Returns 0 or a negative
 * GB_E* code (then gb_plat_proctitle_set fails too). */
int gb_plat_proctitle_init(int argc, char **argv);

/* Shows title (cut to the room argv had). Returns 0 or a negative GB_E*
 * code. */
int gb_plat_proctitle_set(const char *title);

#endif
