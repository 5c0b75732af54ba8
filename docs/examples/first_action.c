/* A polarzoo process agent in C: answers every turn with its first legal action id.
 * cc -O2 -o first_action docs/examples/first_action.c, then proc:./first_action */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    static char line[1 << 22];
    while (fgets(line, sizeof line, stdin)) {
        char *legal = strstr(line, "\"legal_actions\":[");
        if (!legal) return 1;
        long action = strtol(legal + strlen("\"legal_actions\":["), NULL, 10);
        printf("{\"action\": %ld}\n", action);
        fflush(stdout);
    }
    return 0;
}
