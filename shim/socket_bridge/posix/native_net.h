// The POSIX headers that declare the socket calls the socket bridge's portable files make
// (getaddrinfo, bind, connect, select, getsockname, inet_ntop, AF_UNIX's sockaddr_un): included
// by those .cpp files only. windows/native_net.h is the other platform's.
#pragma once

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
