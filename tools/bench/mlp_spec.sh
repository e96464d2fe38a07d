# Sourced by the benchmarks that train MLPs on Fashion-MNIST.
#
# mlp_spec [--metric] WIDTHS MODELS OPTIM DATA [SETTING...]
#   prints a sweep of MODELS ReLU MLPs of the comma-separated WIDTHS
#   (784,128,10: one hidden layer of 128) trained by cross-entropy with the
#   optimizer OPTIM (`adam(lr = logspace(1e-4, 1e-1, models))`) on DATA
#   (`fashion_mnist(batch = 128)`); each SETTING is one more line of the
#   sweep (`epochs = 1`). --metric adds the accuracy as a metric.
mlp_spec() {
  local metric=0
  if [ "$1" = "--metric" ]; then metric=1; shift; fi
  local widths="$1" models="$2" optim="$3" data="$4"
  shift 4
  local -a w
  IFS=, read -r -a w <<< "$widths"
  echo "model mlp {"
  echo "  input  x: f32[${w[0]}]"
  echo "  target y: class[${w[-1]}]"
  local h="x" n=$(( ${#w[@]} - 1 )) i
  for ((i = 0; i < n; i++)); do
    echo "  param  w$i: f32[${w[i]}, ${w[i+1]}] = kaiming_uniform"
    echo "  param  b$i: f32[${w[i+1]}] = zeros"
    if (( i + 1 < n )); then
      echo "  h$i = relu($h @ w$i + b$i)"; h="h$i"
    else
      echo "  logits = $h @ w$i + b$i"
    fi
  done
  echo "  loss   = cross_entropy(logits, y)"
  [ "$metric" = 0 ] || echo "  metric acc = accuracy(logits, y)"
  echo "}"
  echo "sweep {"
  echo "  models = $models"
  echo "  optim  = $optim"
  echo "  data   = $data"
  local setting
  for setting in "$@"; do echo "  $setting"; done
  echo "}"
}
