/* SPDX-License-Identifier: GPL-2.0 */
/* framelink stream (stream.c): one- and two-way streams between both ends, for make bench */
#ifndef FRAMELINK_STREAM_H
#define FRAMELINK_STREAM_H

int cmd_stream(int argc, char **argv);

#endif /* FRAMELINK_STREAM_H */
