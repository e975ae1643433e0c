// Command crreactor is the controller-runtime reactor of the scale
// benchmark (bench/scale, docs/benchmarks.md): the job the operator does,
// written the way a kubebuilder user would write it, with a fixed answer
// and no decision. For each GpuWorkload: add a finalizer, strategic-merge
// patch the target Deployment (node selector, toleration, one nvidia.com/gpu
// requested and limited on the container), update the status (observed
// generation, the placement, Placed and Applied conditions), record one
// Event. A watch of Deployments, mapped to the GpuWorkloads that target them
// through a field index on spec.targetRef.name, repairs a Deployment whose
// placement was changed or removed.
//
// Everything else is controller-runtime's defaults as a kubebuilder project
// has them: the client without a client-side rate limit (ctrl.GetConfig
// sets QPS -1 and leaves it to the server's priority and fairness), one
// worker (MaxConcurrentReconciles 1), the manager's event recorder (client-
// go's broadcaster, which drops Events when its queue of 1,000 is full), no
// leader election. The metrics (controller_runtime_reconcile_total,
// workqueue_depth) are served over plain HTTP on loopback for the harness,
// and /readyz answers once the caches are synced.
//
//	crreactor --kubeconfig FILE --metrics-bind-address 127.0.0.1:PORT
//	          --health-probe-bind-address 127.0.0.1:PORT [--max-concurrent-reconciles 1]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	finalizer      = "gpuplacement.io/finalizer"
	targetIndex    = "spec.targetRef.name"
	instanceLabel  = "node.kubernetes.io/instance-type"
	gpuResource    = corev1.ResourceName("nvidia.com/gpu")
	fixedInstance  = "g4dn.xlarge" // the answer, as the floor's: no decision
	fixedTier      = "NVIDIA"
	fixedGPUs      = 1
	controllerName = "gpuworkload"
)

func main() {
	var metricsAddr, probeAddr string
	var workers int
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "where /metrics is served (plain HTTP); 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "where /healthz and /readyz are served")
	flag.IntVar(&workers, "max-concurrent-reconciles", 1, "reconcile workers (controller-runtime's default: 1)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := addKnownTypes(scheme); err != nil {
		panic(err)
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
	})
	if err != nil {
		log.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := (&Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorderFor("gpu-placement-controller-runtime"),
	}).SetupWithManager(ctx, mgr, workers); err != nil {
		log.Error(err, "unable to create the controller")
		os.Exit(1)
	}

	// Ready once the informers are synced, as the operator's /readyz.
	var synced atomic.Bool
	if err := mgr.AddHealthzCheck("healthz", func(*http.Request) error { return nil }); err != nil {
		panic(err)
	}
	if err := mgr.AddReadyzCheck("caches", func(*http.Request) error {
		if !synced.Load() {
			return errors.New("caches not synced yet")
		}
		return nil
	}); err != nil {
		panic(err)
	}
	go func() {
		if mgr.GetCache().WaitForCacheSync(ctx) {
			synced.Store(true)
		}
	}()

	log.Info("starting the manager", "workers", workers)
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "the manager stopped")
		os.Exit(1)
	}
}

type Reconciler struct {
	client.Client
	Recorder record.EventRecorder
}

func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &GpuWorkload{}, targetIndex, func(object client.Object) []string {
		workload := object.(*GpuWorkload)
		if workload.Spec.TargetRef.Name == "" {
			return nil
		}
		return []string{workload.Spec.TargetRef.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&GpuWorkload{}).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.workloadsTargeting)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named(controllerName).
		Complete(r)
}

// workloadsTargeting maps a Deployment to the GpuWorkloads whose
// spec.targetRef.name names it, from the cache's index.
func (r *Reconciler) workloadsTargeting(ctx context.Context, object client.Object) []reconcile.Request {
	var workloads GpuWorkloadList
	if err := r.List(ctx, &workloads, client.InNamespace(object.GetNamespace()),
		client.MatchingFields{targetIndex: object.GetName()}); err != nil {
		return nil
	}
	requests := make([]reconcile.Request, 0, len(workloads.Items))
	for _, w := range workloads.Items {
		requests = append(requests, reconcile.Request{NamespacedName: types.NamespacedName{
			Namespace: w.Namespace, Name: w.Name}})
	}
	return requests
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var workload GpuWorkload
	if err := r.Get(ctx, req.NamespacedName, &workload); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !workload.DeletionTimestamp.IsZero() {
		// The fixed answer leaves the Deployment as it is: let it go.
		if controllerutil.RemoveFinalizer(&workload, finalizer) {
			return ctrl.Result{}, r.Update(ctx, &workload)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&workload, finalizer) {
		if err := r.Update(ctx, &workload); err != nil {
			return ctrl.Result{}, err
		}
	}

	var deployment appsv1.Deployment
	key := types.NamespacedName{Namespace: workload.Namespace, Name: workload.Spec.TargetRef.Name}
	applied := metav1.Condition{Type: "Applied", Status: metav1.ConditionTrue, Reason: "Patched",
		ObservedGeneration: workload.Generation,
		Message:            "the Deployment's pod template carries the placement"}
	err := r.Get(ctx, key, &deployment)
	switch {
	case apierrors.IsNotFound(err):
		applied.Status, applied.Reason = metav1.ConditionFalse, "DeploymentNotFound"
		applied.Message = "no Deployment " + key.Name + " in " + key.Namespace
	case err != nil:
		return ctrl.Result{}, err
	case !carriesPlacement(&deployment, containerOf(&workload, &deployment)):
		patch, err := placementPatch(containerOf(&workload, &deployment))
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Patch(ctx, &deployment, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
			return ctrl.Result{}, err
		}
	}

	status := workload.Status.DeepCopy()
	status.ObservedGeneration = workload.Generation
	status.Placement = &Placement{Tier: fixedTier, InstanceType: fixedInstance, AcceleratorCount: fixedGPUs}
	wasPlaced := meta.IsStatusConditionTrue(workload.Status.Conditions, "Placed")
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: "Placed", Status: metav1.ConditionTrue,
		Reason: "FixedAnswer", ObservedGeneration: workload.Generation, Message: "placed on " + fixedInstance})
	meta.SetStatusCondition(&status.Conditions, applied)
	if statusEqual(&workload.Status, status) {
		return ctrl.Result{}, nil
	}
	workload.Status = *status
	if err := r.Status().Update(ctx, &workload); err != nil {
		return ctrl.Result{}, err
	}
	if !wasPlaced {
		r.Recorder.Eventf(&workload, corev1.EventTypeNormal, "Placed", "placed on %s (%d %s)",
			fixedInstance, fixedGPUs, gpuResource)
	}
	return ctrl.Result{}, nil
}

// containerOf: the first container the spec names, or the pod template's first.
func containerOf(workload *GpuWorkload, deployment *appsv1.Deployment) string {
	if len(workload.Spec.Containers) > 0 {
		return workload.Spec.Containers[0]
	}
	if containers := deployment.Spec.Template.Spec.Containers; len(containers) > 0 {
		return containers[0].Name
	}
	return ""
}

func carriesPlacement(deployment *appsv1.Deployment, container string) bool {
	spec := &deployment.Spec.Template.Spec
	if spec.NodeSelector[instanceLabel] != fixedInstance {
		return false
	}
	tolerated := false
	for _, t := range spec.Tolerations {
		if t.Key == string(gpuResource) && t.Operator == corev1.TolerationOpExists && t.Effect == corev1.TaintEffectNoSchedule {
			tolerated = true
		}
	}
	if !tolerated {
		return false
	}
	want := resource.MustParse(fmt.Sprint(fixedGPUs))
	for _, c := range spec.Containers {
		if c.Name == container {
			requests, limits := c.Resources.Requests[gpuResource], c.Resources.Limits[gpuResource]
			return requests.Cmp(want) == 0 && limits.Cmp(want) == 0
		}
	}
	return false
}

// placementPatch: the same fields the floor writes.
func placementPatch(container string) ([]byte, error) {
	gpus := fmt.Sprint(fixedGPUs)
	return json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]string{instanceLabel: fixedInstance},
		"tolerations": []map[string]string{{"key": string(gpuResource), "operator": "Exists",
			"effect": "NoSchedule"}},
		"containers": []map[string]any{{"name": container, "resources": map[string]any{
			"limits": map[string]string{string(gpuResource): gpus}, "requests": map[string]string{string(gpuResource): gpus}}}},
	}}}})
}

// statusEqual ignores the conditions' transition times, which
// SetStatusCondition keeps when the status does not change.
func statusEqual(a, b *GpuWorkloadStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || (a.Placement == nil) != (b.Placement == nil) ||
		(a.Placement != nil && *a.Placement != *b.Placement) || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}
