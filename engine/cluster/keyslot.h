/*
 * Redis Cluster's hash slots: CRC16 (XMODEM: polynomial 0x1021, no
 * reflection, initial 0) of the key, or of its hash tag, modulo 16384.
 */
#ifndef GB_ENGINE_CLUSTER_KEYSLOT_H
#define GB_ENGINE_CLUSTER_KEYSLOT_H

#include <stddef.h>
#include <stdint.h>

#define GB_CLUSTER_SLOTS 16384

uint16_t gb_crc16(const char *buf, size_t len);

/* The slot of key, as Redis's keyHashSlot: when the key holds a '{' with a
 * '}' after it and at least one byte between them, only the bytes between
 * the first '{' and the first '}' after it are hashed ("{user1}.name" and
 * "{user1}.mail" share a slot); otherwise the whole key ("{}x", "x{"). */
unsigned gb_keyslot(const char *key, size_t len);

#endif
