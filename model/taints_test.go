package model

import "testing"

func TestTolerationTolerates(t *testing.T) {
	gpu := Taint{Key: "gpu", Value: "true", Effect: NoSchedule}
	tests := []struct {
		name string
		tol  Toleration
		want bool
	}{
		{"exists everything", Toleration{Operator: TolerationExists}, true},
		{"exists key", Toleration{Key: "gpu", Operator: TolerationExists}, true},
		{"exists key ignores value", Toleration{Key: "gpu", Operator: TolerationExists, Value: "false"}, true},
		{"exists other key", Toleration{Key: "spot", Operator: TolerationExists}, false},
		{"equal value", Toleration{Key: "gpu", Operator: TolerationEqual, Value: "true"}, true},
		{"equal wrong value", Toleration{Key: "gpu", Operator: TolerationEqual, Value: "false"}, false},
		{"empty operator is equal", Toleration{Key: "gpu", Value: "true"}, true},
		{"empty operator wrong value", Toleration{Key: "gpu"}, false},
		{"effect matches", Toleration{Key: "gpu", Operator: TolerationExists, Effect: NoSchedule}, true},
		{"effect differs", Toleration{Key: "gpu", Operator: TolerationExists, Effect: NoExecute}, false},
		{"empty key exists with effect", Toleration{Operator: TolerationExists, Effect: NoExecute}, false},
		{"unknown operator", Toleration{Key: "gpu", Operator: "Gt", Value: "true"}, false},
	}
	for _, tt := range tests {
		if got := tt.tol.Tolerates(gpu); got != tt.want {
			t.Errorf("%s: Tolerates = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTolerates(t *testing.T) {
	taints := []Taint{
		{Key: "gpu", Value: "true", Effect: NoSchedule},
		{Key: "maint", Effect: NoExecute},
		{Key: "soft", Effect: PreferNoSchedule},
	}
	gpuTol := Toleration{Key: "gpu", Operator: TolerationExists}
	maintTol := Toleration{Key: "maint", Operator: TolerationExists, Effect: NoExecute}
	if Tolerates(nil, taints) {
		t.Error("no tolerations tolerated NoSchedule and NoExecute taints")
	}
	if Tolerates([]Toleration{gpuTol}, taints) {
		t.Error("an untolerated NoExecute taint did not block")
	}
	if !Tolerates([]Toleration{gpuTol, maintTol}, taints) {
		t.Error("PreferNoSchedule blocked")
	}
	if !Tolerates(nil, nil) {
		t.Error("no taints blocked")
	}
	if got, ok := UntoleratedTaint([]Toleration{maintTol}, taints); !ok || got.Key != "gpu" || got.String() != "gpu=true:NoSchedule" {
		t.Errorf("UntoleratedTaint = %v, %v", got, ok)
	}
	if n := UntoleratedPreferNoSchedule([]Toleration{gpuTol}, taints); n != 1 {
		t.Errorf("UntoleratedPreferNoSchedule = %d, want 1", n)
	}
	if n := UntoleratedPreferNoSchedule([]Toleration{{Key: "soft", Operator: TolerationExists, Effect: PreferNoSchedule}}, taints); n != 0 {
		t.Errorf("UntoleratedPreferNoSchedule with toleration = %d, want 0", n)
	}
	if n := UntoleratedPreferNoSchedule([]Toleration{{Key: "soft", Operator: TolerationExists, Effect: NoSchedule}}, taints); n != 1 {
		t.Errorf("a NoSchedule toleration must not tolerate PreferNoSchedule: got %d, want 1", n)
	}
	if s := (Taint{Key: "k", Effect: NoSchedule}).String(); s != "k:NoSchedule" {
		t.Errorf("Taint.String = %q", s)
	}
}

func TestTolerationValidate(t *testing.T) {
	for _, tt := range []struct {
		tol Toleration
		ok  bool
	}{
		{Toleration{Operator: TolerationExists}, true},
		{Toleration{Key: "k", Value: "v"}, true},
		{Toleration{Value: "v"}, false},
		{Toleration{Key: "k", Operator: TolerationExists, Value: "v"}, false},
		{Toleration{Key: "k", Operator: "Lt"}, false},
		{Toleration{Key: "k", Operator: TolerationExists, Effect: "Sometimes"}, false},
	} {
		if err := tt.tol.Validate(); (err == nil) != tt.ok {
			t.Errorf("%v.Validate() = %v, want ok=%v", tt.tol, err, tt.ok)
		}
	}
}
