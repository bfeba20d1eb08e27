/*
 * uml-xstate.c - preloaded into linux.uml by start.sh, so that the node boots on hosts whose CPUs
 * have a large XSAVE area (AMX: Sapphire Rapids and later). UML saves and restores its processes'
 * FPU state with ptrace's NT_X86_XSTATE regset through a buffer of a fixed 4 KiB, and Linux takes a
 * PTRACE_SETREGSET of that regset only with a buffer of the host's whole XSAVE size (EFAULT
 * otherwise): the node's init died at its first switch ("ptrace set fp regs failed, errno = 14").
 * Here such a short write is laid over the thread's whole current state and written whole. The
 * components past 4 KiB (AMX tiles) are ones UML's processes can never turn on, so they are
 * unchanged. Every other call goes to libc's ptrace as it is.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define BIG (64 * 1024)

typedef long (*ptrace_fn)(enum __ptrace_request, pid_t, void *, void *);

static ptrace_fn real(void) {
  static ptrace_fn fn;
  if (!fn) fn = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
  return fn;
}

__attribute__((constructor)) static void no_inheritance(void) { unsetenv("LD_PRELOAD"); }

long ptrace(enum __ptrace_request request, ...) {
  va_list ap;
  va_start(ap, request);
  pid_t pid = va_arg(ap, pid_t);
  void *addr = va_arg(ap, void *);
  void *data = va_arg(ap, void *);
  va_end(ap);
  if (request != PTRACE_SETREGSET || (long)addr != NT_X86_XSTATE) {
    return real()(request, pid, addr, data);
  }
  struct iovec *given = data;
  static unsigned char full[BIG];
  struct iovec all = {full, sizeof full};
  /* The host takes only a whole XSAVE buffer of its own size: start from the thread's own state
     and lay the caller's part over it. */
  if (real()(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &all) < 0) return -1;
  if (given->iov_len >= all.iov_len) return real()(request, pid, addr, data);
  memcpy(full, given->iov_base, given->iov_len);
  return real()(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &all);
}
