/*
 * MONITOR: every command the gate runs, shown to the clients that asked,
 * in Redis 7.0's line format:
 *
 *   +1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
 *
 * the wall-clock time in seconds and microseconds, the database the client
 * is in after the command, its address ("unix:<path>" for the Unix socket,
 * "ring:<slot>@<owner address>" for a shared-memory ring client), then each
 * argument quoted as Redis's sdscatrepr does (\n \r \t \a \b \" \\, \xhh
 * for other bytes outside the printable range).
 *
 * As in Redis 7.0 a command is shown once it ran (so a queued command
 * appears when EXEC runs it, before "EXEC" itself), never when rejected
 * (unknown, arity, NOAUTH, NOPERM, OOM) or re-run after a wake-up; ADMIN
 * and skip-monitor commands (CONFIG, CLIENT, DEBUG, ...) are not shown;
 * AUTH's and HELLO ... AUTH's secrets read "(redacted)".
 */
#ifndef GB_ENGINE_CORE_MONITOR_H
#define GB_ENGINE_CORE_MONITOR_H

#include "engine/core/request/client.h"
#include "engine/core/request/command.h"

/* MONITOR: c becomes a monitor (it may still send commands that do not
 * touch the keyspace, as Redis's replica-like monitors). */
void gb_monitor_add(gb_client *c);
/* Whether argument i of the call carries a secret MONITOR and SLOWLOG show
 * as "(redacted)" (AUTH's, HELLO ... AUTH's, CONFIG SET requirepass's). */
bool gb_command_arg_redacted(const gb_command *cmd, int argc, const gb_slice *argv, int i);
/* c goes away or RESETs. */
void gb_monitor_remove(gb_client *c);
/* After cmd ran for c: the line to every monitor (the gate calls this only
 * when eng->nmonitors is not 0). */
void gb_monitor_feed(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv);
/* The same line whatever the command's flags: EVAL*, EVALSHA* and FCALL*
 * are skip-monitor in Redis 7.0, which shows them explicitly before they
 * run so that the commands their script calls ("[0 lua] ...") follow. */
void gb_monitor_feed_always(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv);

#endif
