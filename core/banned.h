/* banned.h: functions we never use (git's banned.h idea). Include last in .c files.
 * Unbounded copies, and number parsing without error checks (use parse.h instead). */
#ifndef TIPC_BANNED_H
#define TIPC_BANNED_H
#define BANNED(f) sorry_##f##_is_a_banned_function
#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atof
#define atof(x) BANNED(atof)
#undef system
#define system(x) BANNED(system)
#undef popen
#define popen(x, y) BANNED(popen)
#endif
