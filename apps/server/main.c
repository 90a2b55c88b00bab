#include <stdio.h>
int main(void) { puts("goblin-core: under construction"); return 0; }
