/* version.h: the tipc version string (bumped by hand at releases). */
#ifndef TIPC_VERSION_H
#define TIPC_VERSION_H
#define TIPC_VERSION "0.1.0"
#endif
