/* spawn.c: fork + execvp with an argument vector, optional capture of stdout through a pipe.
 * It must never use system() or popen(): both go through a shell. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"
#include "spawn.h"

int mlk_spawn(const char *const *argv, char *out, size_t len, int quiet, int *exit_code, mlk_error *err)
{
    int fds[2] = {-1, -1};
    if (out && pipe2(fds, O_CLOEXEC))
        return mlk_fail(err, MLK_E_CHILD, "cannot run %s: pipe: %s", argv[0], strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        if (out) {
            close(fds[0]);
            close(fds[1]);
        }
        return mlk_fail(err, MLK_E_CHILD, "cannot run %s: fork: %s", argv[0], strerror(e));
    }
    if (pid == 0) {
        if (out)
            dup2(fds[1], STDOUT_FILENO);
        if (quiet) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, STDERR_FILENO);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t used = 0;
    bool interrupted = false;
    if (out) {
        close(fds[1]);
        for (ssize_t n; (n = read(fds[0], out + used, len - 1 - used)) != 0;) {
            if (n < 0 && errno == EINTR && mlk_run_interrupted) {
                kill(pid, SIGKILL); /* its end of the pipe closes with it */
                interrupted = true;
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break;
            used += (size_t)n;
            if (used == len - 1) {
                char sink[256]; /* drain the rest so the child never blocks on a full pipe */
                while (read(fds[0], sink, sizeof sink) > 0) {
                }
                break;
            }
        }
        out[used] = '\0';
        close(fds[0]);
    }
    /* Wait, looking at the interrupt flag every 20 ms: a signal that came just before waitpid would not wake it, and
     * a model generator or gnuplot may run for minutes. */
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (mlk_run_interrupted && !interrupted) {
            kill(pid, SIGKILL);
            interrupted = true;
        }
        struct timespec t = {0, 20 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    if (interrupted)
        return mlk_fail(err, MLK_E_INTERRUPTED, "interrupted while %s ran (it was stopped)", argv[0]);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (*exit_code == 127)
        return mlk_fail(err, MLK_E_CHILD, "cannot run %s (not found or not executable)", argv[0]);
    return MLK_OK;
}
