// A stand-in for a running kubelet as `dxshim doctor` finds one on Linux: a process named
// `kubelet` (its /proc/PID/comm) whose command line carries kubelet's flags. It takes any
// arguments and waits until it is killed, or its parent (the test) ends.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

int main() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 0;  // the test already ended
  while (true) pause();
}
