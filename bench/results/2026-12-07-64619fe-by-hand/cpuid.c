#include <cpuid.h>
#include <stdio.h>
#include <time.h>
int main(){unsigned a,b,c,d; struct timespec s,e; clock_gettime(CLOCK_MONOTONIC,&s); for(int i=0;i<10000;i++){__cpuid_count(4,i&3,a,b,c,d);} clock_gettime(CLOCK_MONOTONIC,&e); printf("%.2f us per cpuid\n", ((e.tv_sec-s.tv_sec)*1e9+(e.tv_nsec-s.tv_nsec))/10000/1000.0); return 0;}
