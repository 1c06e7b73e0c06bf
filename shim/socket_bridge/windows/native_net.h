// The Winsock headers that declare the BSD-style calls the socket bridge's portable files make
// (getaddrinfo, bind, connect, select, getsockname, inet_ntop, AF_UNIX's sockaddr_un): included
// by those .cpp files only. posix/native_net.h is the other platform's.
#pragma once

// clang-format off
#include <winsock2.h>  // before the others
#include <afunix.h>
#include <ws2tcpip.h>
// clang-format on
