/* Minimal sandbox "pause" process for the test images: sleeps until SIGTERM/SIGINT, reaps
 * children. Built statically by scripts/build-test-images.sh so the image needs no libc. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {0};
  stop.sa_handler = on_stop;
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGINT, &stop, NULL);
  struct sigaction child = {0};
  child.sa_handler = on_child;
  sigaction(SIGCHLD, &child, NULL);
  for (;;) {
    pause();
  }
}
