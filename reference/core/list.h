/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * list.h - an intrusive, circular, doubly-linked list.
 *
 * Every runtime object sits on a list of its kind so that the end of a run
 * can free whatever the program left behind; links live inside the objects,
 * so linking never allocates and unlinking is O(1).
 */
#ifndef CW_LIST_H
#define CW_LIST_H

#include <stddef.h>

typedef struct cw_list {
    struct cw_list *prev, *next;
} cw_list;

static inline void cw_list_init(cw_list *head)
{
    head->prev = head->next = head;
}

static inline int cw_list_empty(const cw_list *head)
{
    return head->next == head;
}

static inline void cw_list_push_back(cw_list *head, cw_list *node)
{
    node->prev = head->prev;
    node->next = head;
    head->prev->next = node;
    head->prev = node;
}

/* Unlinking leaves the node pointing at itself, so a second unlink is harmless. */
static inline void cw_list_remove(cw_list *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->prev = node->next = node;
}

#define cw_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#endif
