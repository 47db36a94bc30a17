/* bounds prints, as JSON, every TA-Lib C function's optional parameters
 * with their type, bounds and default, read from TA-Lib's own abstract
 * interface (the npm binding does not expose the bounds). */
#include <stdio.h>
#include "ta_libc.h"

static int first = 1;

static void fn(const TA_FuncInfo *fi, void *ctx) {
  (void)ctx;
  const TA_FuncHandle *h;
  TA_GetFuncHandle(fi->name, &h);
  printf("%s\n  \"%s\": {", first ? "" : ",", fi->name);
  first = 0;
  for (unsigned i = 0; i < fi->nbOptInput; i++) {
    const TA_OptInputParameterInfo *p;
    TA_GetOptInputParameterInfo(h, i, &p);
    printf("%s\"%s\": ", i ? ", " : "", p->paramName);
    if (p->type == TA_OptInput_IntegerRange) {
      const TA_IntegerRange *r = p->dataSet;
      printf("{\"type\": \"int\", \"min\": %d, \"max\": %d, \"default\": %.17g}", r->min, r->max, p->defaultValue);
    } else if (p->type == TA_OptInput_RealRange) {
      const TA_RealRange *r = p->dataSet;
      printf("{\"type\": \"real\", \"min\": %.17g, \"max\": %.17g, \"default\": %.17g}", r->min, r->max, p->defaultValue);
    } else {
      const TA_IntegerList *r = p->dataSet;
      printf("{\"type\": \"list\", \"min\": %d, \"max\": %d, \"default\": %.17g}", r->data[0].value, r->data[r->nbElement - 1].value, p->defaultValue);
    }
  }
  printf("}");
}

int main(void) {
  TA_Initialize();
  printf("{");
  TA_ForEachFunc(fn, NULL);
  printf("\n}\n");
  return 0;
}
