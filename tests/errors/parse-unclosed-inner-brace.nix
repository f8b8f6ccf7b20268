# The inner set `labels` is never closed; its '}' was forgotten, so the
# last '}' of the file closes it and the outer set stays open.
{
  name = "web";
  labels = {
    app = "web";
    tier = "frontend";
  replicas = 2;
}
