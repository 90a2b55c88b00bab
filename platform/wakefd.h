/*
 * A wake descriptor: something a libuv loop (uv_poll_t) can watch for
 * readability and that another thread, a signal handler or another process
 * (given write_fd over SCM_RIGHTS) can signal.
 *
 *   linux        - one eventfd (EFD_NONBLOCK|EFD_CLOEXEC): read_fd == write_fd
 *   darwin       - a non-blocking pipe, write end F_SETNOSIGPIPE
 *   posix        - a non-blocking AF_UNIX socketpair written with
 *                  MSG_NOSIGNAL: a pipe would raise SIGPIPE in the signaller
 *                  (a client application) once the reader has exited
 *
 * Signals coalesce: any number of signals before a drain read as one.
 *
 * The ring server opens one per claim and hands the claimer write_fd: on
 * Linux that is the eventfd itself, which the claimer can also read (drain)
 * - so a descriptor must never be shared by two clients, or one could
 * swallow the other's wake-ups. On darwin/posix the claimer gets only the
 * write end. A draining or flooding claimer affects only its own descriptor;
 * a drain is bounded (a writer that never stops cannot hold the reader in
 * it).
 */
#ifndef GB_PLATFORM_WAKEFD_H
#define GB_PLATFORM_WAKEFD_H

typedef struct {
    int read_fd;  /* watch this for POLLIN */
    int write_fd; /* gb_wakefd_signal() this; == read_fd on Linux */
} gb_wakefd;

int gb_wakefd_open(gb_wakefd *w);

/* Async-signal-safe, never blocks, preserves errno. 0, or GB_ECLOSED when
 * the reading side is gone (never SIGPIPE). A full buffer counts as
 * signalled: a wake-up is already pending. */
int gb_wakefd_signal(int write_fd);

/* Consumes pending signals without blocking, in a bounded number of reads:
 * 1 if there were any, 0 if not. Signals left over (a writer still
 * writing) leave the descriptor readable. */
int gb_wakefd_drain(int read_fd);

/* Closes both ends (once, even when they are the same descriptor). */
void gb_wakefd_close(gb_wakefd *w);

#endif
