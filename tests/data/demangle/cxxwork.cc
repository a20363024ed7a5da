#include <vector>
#include <string>
namespace ns {
struct W { int spin(int n); template<class T> static T tw(T x); int operator()(int x) const; };
int W::spin(int n){ volatile int s=0; for(int i=0;i<n;i++) s+=i; return s; }
template<class T> T W::tw(T x){ volatile T s=0; for(int i=0;i<20000000;i++) s+=x; return s; }
int W::operator()(int x) const { volatile int s=0; for(int i=0;i<x;i++) s+=i; return s;}
}
namespace { int anon(int n){ volatile int s=0; for(int i=0;i<n;i++) s+=i; return s; } }
int main(){ ns::W w; int r=0; for(int k=0;k<30;k++){ r+=w.spin(1000000); r+=anon(1000000); r+=w(1000000);} r+=(int)ns::W::tw<double>(1.0); r+=ns::W::tw<long>(2); std::vector<std::string> v; for(int i=0;i<100000;i++) v.push_back(std::to_string(i)); return r&1; }
